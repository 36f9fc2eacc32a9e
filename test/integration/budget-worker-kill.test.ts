/**
 * The worker SIGKILLed while a run's settle is in flight (the Update applied, the activity not yet
 * completed): Temporal retries the settle on the restarted worker, and the team's spend counts the
 * run exactly once. Real dev server, worker processes; stand-in stages (no Ray).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { budgetLedgerClient } from '../../src/worker/budget-ledger-client.js';
import { REPO_ROOT } from '../../src/config/config.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let dir: string;
const workers: ChildProcess[] = [];
before(async () => {
  env = await devServerEnv();
  dir = await mkdtemp(join(tmpdir(), 'budget-kill-'));
});
after(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await env?.teardown();
  await rm(dir, { recursive: true, force: true });
});

function startWorker(taskQueue: string, budgets: unknown, gate: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'test/helpers/budget-worker.ts')],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        TASK_QUEUE: taskQueue,
        BUDGETS: JSON.stringify(budgets),
        BUDGET_GATE: gate,
      },
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGKILL' && code !== 0)
      console.error(`budget worker exited ${code}:\n${out.slice(-3000)}`);
  });
  workers.push(child);
  return child;
}

async function waitFor(what: string, ok: () => boolean, seconds: number): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    if (ok()) return;
    await sleep(100);
  }
  assert.fail(`${what} within ${seconds} s`);
}

describe('fault: the worker killed in the middle of a settle (real dev server, worker processes)', () => {
  it('the retried settle counts the run exactly once', async () => {
    const taskQueue = uniqueId('budget-kill');
    const team = uniqueId('kill');
    const budgets = { teams: { [team]: { gpuHours: 10, period: 'month', policy: 'refuse' } } };
    const gate = join(dir, 'gate');
    const first = startWorker(taskQueue, budgets, gate);
    const input = testInput(testSpec({ team, budget: { estimateGpuHours: 2 } }));
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId: uniqueId('budget-kill-run'),
      args: [input],
    });
    await waitFor('the settle Update was applied', () => existsSync(`${gate}.sent`), 240);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    await writeFile(gate, 'go');
    startWorker(taskQueue, budgets, gate);
    const t0 = Date.now();
    const result = await handle.result();
    console.log(`[fault numbers] the run ended ${Date.now() - t0} ms after the kill`);
    assert.equal(result.outcome, 'succeeded');

    // The settle ran twice (the kill landed between the Update and the activity's completion).
    const history = await handle.fetchHistory();
    const settleStarts = (history.events ?? []).filter(
      (e) => e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1,
    );
    assert.ok(settleStarts.length >= 1, 'the settle activity was retried after the kill');

    const report = await budgetLedgerClient(env.client, taskQueue).report(team);
    const measured = result.gpuUsage.allocatedSeconds / 3600;
    assert.ok(measured > 0);
    assert.equal(report?.reserved, 0);
    assert.ok(
      Math.abs((report?.spent ?? -1) - measured) < 1 / 3600,
      `spent ${report?.spent} GPU-hours = the run's ${measured}, counted once`,
    );
  });
});
