import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { REPO_ROOT } from '../../src/config/config.js';
import type { campaign } from '../../src/workflows/campaign.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId } from '../helpers/temporal.js';

const run = promisify(execFile);

let env: TestWorkflowEnvironment;
let dir: string;
let worker: ChildProcess | undefined;
let output = '';
let taskQueueOfWorker: string | undefined;
/** The first test starts the worker; the second uses it. */
const started = (): string => taskQueueOfWorker ?? assert.fail('the worker did not start');

before(async () => {
  env = await devServerEnv();
  dir = await mkdtemp(join(tmpdir(), 'ragen-worker-logs-'));
});
after(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker?.once('exit', r));
    worker.kill('SIGTERM');
    // A worker waiting on its shutdown may ignore SIGTERM (see pitfalls): kill it after a grace period.
    await Promise.race([exited, sleep(10_000)]);
    if (worker.exitCode === null) worker.kill('SIGKILL');
  }
  await env?.teardown();
  await rm(dir, { recursive: true, force: true });
});

interface LogLine {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

const lines = (): LogLine[] =>
  output
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);

async function waitForLine(what: string, match: (l: LogLine) => boolean, seconds = 180): Promise<LogLine> {
  for (let i = 0; i < seconds * 4; i++) {
    const found = output.includes('\n') ? lines().find(match) : undefined;
    if (found) return found;
    if (worker?.exitCode !== null) throw new Error(`the worker exited with ${worker?.exitCode}:\n${output}`);
    await sleep(250);
  }
  throw new Error(`no log line for ${what} within ${seconds} s:\n${output}`);
}

describe('worker logs (src/worker/worker.ts as a process, real dev server, real activities)', () => {
  it('are JSON lines; workflow lines carry the workflow id, stage and attempt', async () => {
    const taskQueue = uniqueId('worker-logs');
    worker = spawn(process.execPath, ['--import', 'tsx', 'src/worker/worker.ts'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: 'default',
        RAGEN_TASK_QUEUE: taskQueue,
        RAGEN_RUN_ROOT: `/tmp/ro-wl-${process.pid}`,
        RAGEN_LOG_LEVEL: 'INFO',
      },
    });
    taskQueueOfWorker = taskQueue;
    worker.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const startLine = await waitForLine('the start', (l) => l.msg === 'worker: polling task queue');
    assert.equal(startLine['taskQueue'], taskQueue);

    // Storage below a regular file: preflight fails permanently, before any cluster exists.
    const notADir = join(dir, 'file');
    await writeFile(notADir, '');
    const workflowId = uniqueId('logged-experiment');
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId,
      args: [testInput(testSpec({}, notADir))],
    });
    await assert.rejects(handle.result(), WorkflowFailedError);

    const preflight = await waitForLine('stage preflight', (l) => l.msg === 'stage preflight');
    assert.equal(preflight['workflowId'], workflowId);
    assert.equal(preflight['workflowType'], 'experiment');
    assert.equal(preflight['stage'], 'preflight');
    assert.equal(preflight['attempt'], 0);
    const done = await waitForLine(
      'stage done',
      (l) => l.msg === 'stage done' && l['workflowId'] === workflowId,
    );
    assert.equal(done['outcome'], 'failed');
    // The SDK's own line for the failed activity carries its context too.
    const activity = await waitForLine('the failed activity', (l) => l['activityType'] === 'preflight');
    assert.equal(activity['workflowId'], workflowId);
    assert.equal(typeof activity['attempt'], 'number');
    // Every line the worker wrote is JSON with a level, a time and a message.
    for (const l of lines()) {
      assert.ok(l.level && l.msg && !Number.isNaN(Date.parse(l.time)), JSON.stringify(l));
    }
  });

  it('`status` answers for an experiment and a campaign, and names an unknown id in one line', async () => {
    const cli = (args: string[]) =>
      run(process.execPath, ['bin/ragen-orchestrator.js', ...args], {
        cwd: REPO_ROOT,
        env: { ...process.env, TEMPORAL_ADDRESS: env.address, RAGEN_DEBUG: '' },
      });
    const taskQueue = started();
    // A Ray version the venv does not have: verify fails, the campaign ends at once (fatal).
    const spec = testSpec({ rayVersion: '2.9.3' }, dir);
    const campaignId = uniqueId('status-campaign');
    const handle = await env.client.workflow.start<typeof campaign>('campaign', {
      taskQueue,
      workflowId: campaignId,
      args: [
        {
          ...testInput(spec),
          budgets: {
            maxAttempts: 1,
            maxAttemptsWithoutNewCheckpoint: 1,
            historyEventsBeforeContinueAsNew: 2000,
          },
        },
      ],
    });
    await assert.rejects(handle.result(), WorkflowFailedError);
    const campaignStatus = await cli(['status', campaignId]);
    assert.match(campaignStatus.stdout, new RegExp(`^${campaignId}: campaign FAILED`));
    assert.match(campaignStatus.stdout, /phase=done attempt=1 step=0\/20/);
    const experimentStatus = await cli(['status', `${campaignId}-a1`]);
    assert.match(experimentStatus.stdout, /experiment FAILED .*\n.*stage=done attempt=0/);
    const unknown = await cli(['status', 'no-such-workflow']).then(
      () => assert.fail('an unknown id was accepted'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr.trim(), /^no workflow 'no-such-workflow' in namespace 'default' at [^\n]*$/);
  });
});
