/**
 * `budgets apply` and `budgets report` as a user runs them (the CLI process) against the real dev
 * server, with a worker serving the teams' budget workflows: apply starts them, a second apply
 * changes a budget and keeps the books, a bad file changes nothing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { budgetLedgerClient } from '../../src/worker/budget-ledger-client.js';
import type { BudgetReport } from '../../src/domain/budget/budget-ledger.js';
import { cli } from '../helpers/cli-process.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let dir: string;
before(async () => {
  env = await devServerEnv();
  dir = await mkdtemp(join(tmpdir(), 'budgets-cli-'));
});
after(async () => {
  await env?.teardown();
  await rm(dir, { recursive: true, force: true });
});

describe('budgets apply and report (the CLI process, real dev server)', () => {
  it('apply starts each team, a second apply changes a budget and keeps the spend, a bad file changes nothing', async () => {
    const taskQueue = uniqueId('budgets-cli');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fakeActivities().activities,
    });
    const run = (args: string[]) => cli(args, { TEMPORAL_ADDRESS: env.address, RAGEN_TASK_QUEUE: taskQueue });
    const file = join(dir, 'budgets.yaml');
    await worker.runUntil(async () => {
      await writeFile(
        file,
        'teams:\n  vision:\n    gpuHours: 40\n    period: week\n    policy: queue\n  nlp:\n    gpuHours: 8\n    period: day\n    policy: refuse\n',
      );
      const applied = await run(['budgets', 'apply', file]);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, /^TEAM\s+BUDGET\s+PERIOD/m);
      assert.match(applied.stdout, /^vision\s+40\.00\s+week\s/m);
      assert.match(applied.stdout, /^nlp\s+8\.00\s+day\s/m);

      // A run's reservation and settle, as a worker's activities make them.
      const ledger = budgetLedgerClient(env.client, taskQueue);
      const vision = { gpuHours: 40, period: 'week', policy: 'queue' } as const;
      assert.equal(
        (await ledger.reserve('vision', vision, { key: 'run-1/a', gpuHours: 6 })).status,
        'granted',
      );
      await ledger.settle('vision', vision, { key: 'run-1/a', gpuHours: 4.5 });

      await writeFile(file, 'teams:\n  vision:\n    gpuHours: 60\n    period: week\n    policy: queue\n');
      const changed = await run(['budgets', 'apply', file]);
      assert.equal(changed.code, 0, changed.stderr);
      assert.match(changed.stdout, /^vision\s+60\.00\s+week\s+\S+\s+4\.50\s+0\.00\s+55\.50\s+queue\s+0$/m);

      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, 'teams:\n  vision:\n    gpuHours: -1\n    period: fortnight\n    policy: queue\n');
      const refused = await run(['budgets', 'apply', bad]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /gpuHours/);
      assert.match(refused.stderr, /period/);
      assert.match(refused.stderr, /day, week or month/);

      const report = await run(['budgets', 'report', '--file', file, '--format', 'json']);
      assert.equal(report.code, 0, report.stderr);
      const [r] = JSON.parse(report.stdout) as BudgetReport[];
      assert.equal(r?.team, 'vision');
      assert.equal(r?.budget.gpuHours, 60, 'the bad file changed nothing');
      assert.equal(r?.spent, 4.5);
      const nlp = await run(['budgets', 'report', '--team', 'nlp']);
      assert.equal(nlp.code, 0, nlp.stderr);
      assert.match(nlp.stdout, /^nlp\s+8\.00\s+day\s+\S+\s+0\.00\s+0\.00\s+8\.00\s+refuse\s+0$/m);
      const none = await run(['budgets', 'report', '--team', 'audio']);
      assert.match(none.stderr, /team audio: no budget workflow \(run budgets apply/);
    });
    for (const team of ['vision', 'nlp'])
      await env.client.workflow.getHandle(`budget-${team}`).terminate('test done');
  });
});
