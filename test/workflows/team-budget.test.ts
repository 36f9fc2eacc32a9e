import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { budgetLedgerClient } from '../../src/worker/budget-ledger-client.js';
import { type TeamBudget, budgetWorkflowId } from '../../src/domain/budget/budgets.js';
import type { teamBudget } from '../../src/workflows/team-budget.js';
import { reserveUpdate, settleUpdate } from '../../src/workflows/team-budget-definitions.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const budget = (policy: TeamBudget['policy'], gpuHours = 10): TeamBudget => ({
  gpuHours,
  period: 'week',
  policy,
});

/** A worker for the test's own task queue, and the ledger client the activities use. */
async function withBudgets<T>(
  fn: (ledger: ReturnType<typeof budgetLedgerClient>, taskQueue: string) => Promise<T>,
) {
  const taskQueue = uniqueId('budget-tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
  });
  return worker.runUntil(() => fn(budgetLedgerClient(env.client, taskQueue), taskQueue));
}

describe('teamBudget workflow (time-skipping server)', () => {
  it('grants a reservation that fits, and reports the budget, spend, reservations and queue', async () => {
    await withBudgets(async (ledger) => {
      const team = uniqueId('grant');
      assert.deepEqual(await ledger.reserve(team, budget('queue'), { key: 'run-a/1', gpuHours: 4 }), {
        status: 'granted',
        gpuHours: 4,
      });
      const r = await ledger.report(team);
      assert.equal(r?.spent, 0);
      assert.equal(r?.reserved, 4);
      assert.deepEqual(r?.budget, budget('queue'));
      assert.deepEqual(r?.queue, []);
      assert.equal(await ledger.report(uniqueId('nobody')), undefined, 'a team without a workflow');
    });
  });

  it('queues a run that does not fit and grants it, in FIFO order, when a settle frees room', async () => {
    await withBudgets(async (ledger) => {
      const team = uniqueId('queue');
      const b = budget('queue');
      await ledger.reserve(team, b, { key: 'a', gpuHours: 8 });
      const queued = await ledger.reserve(team, b, { key: 'b', gpuHours: 5 });
      assert.equal(queued.status, 'queued');
      assert.equal(queued.status === 'queued' && queued.position, 1);
      assert.match(queued.status === 'queued' ? queued.message : '', /queued at position 1 for team/);
      assert.equal((await ledger.reserve(team, b, { key: 'c', gpuHours: 1 })).status, 'queued');
      assert.deepEqual(
        (await ledger.report(team))?.queue.map((q) => q.key),
        ['b', 'c'],
      );
      await ledger.settle(team, b, { key: 'a', gpuHours: 3 });
      assert.equal((await ledger.reserve(team, b, { key: 'b', gpuHours: 5 })).status, 'granted');
      assert.equal((await ledger.reserve(team, b, { key: 'c', gpuHours: 1 })).status, 'granted');
      const r = await ledger.report(team);
      assert.deepEqual([r?.spent, r?.reserved, r?.queue.length], [3, 6, 0]);
    });
  });

  it('refuses (policy refuse) with a message naming the budget, the spend and the reservation', async () => {
    await withBudgets(async (ledger) => {
      const team = uniqueId('refuse');
      const b = budget('refuse');
      await ledger.reserve(team, b, { key: 'a', gpuHours: 6 });
      await ledger.settle(team, b, { key: 'a', gpuHours: 6 });
      const r = await ledger.reserve(team, b, { key: 'b', gpuHours: 5 });
      assert.equal(r.status, 'refused');
      assert.match(
        r.status === 'refused' ? r.message : '',
        new RegExp(
          `budget of team ${team} is 10 GPU-hours per week .*: spent 6, .*reservation of 5 GPU-hours would exceed it`,
        ),
      );
    });
  });

  it('refuses bad arguments in the validator: nothing reaches history', async () => {
    await withBudgets(async (ledger) => {
      const team = uniqueId('validate');
      await ledger.reserve(team, budget('queue'), { key: 'a', gpuHours: 1 });
      const handle = env.client.workflow.getHandle(budgetWorkflowId(team));
      const before = (await handle.fetchHistory()).events?.length ?? 0;
      const said = (err: unknown) =>
        String((err as { cause?: Error }).cause?.message ?? (err as Error).message);
      await assert.rejects(
        handle.executeUpdate(reserveUpdate, { args: [{ key: '', gpuHours: -1 }] }),
        (err) => /reserve: key: is required.*gpuHours: GPU-hours cannot be negative/.test(said(err)),
      );
      await assert.rejects(
        handle.executeUpdate(settleUpdate, { args: [{ key: 'a', gpuHours: Number.NaN }] }),
      );
      // (The time-skipping server may keep the workflow tasks that ran the validators; no Update is.)
      const added = ((await handle.fetchHistory()).events ?? []).slice(before);
      assert.ok(
        !added.some(
          (e) =>
            e.workflowExecutionUpdateAcceptedEventAttributes ||
            e.workflowExecutionUpdateCompletedEventAttributes,
        ),
        'a rejected update writes no update events',
      );
      assert.deepEqual((await ledger.report(team))?.reserved, 1);
    });
  });

  it('keeps reserve and settle idempotent across a forced continue-as-new', async () => {
    await withBudgets(async (ledger, taskQueue) => {
      const team = uniqueId('can');
      const b = budget('queue');
      const first = await env.client.workflow.start<typeof teamBudget>('teamBudget', {
        taskQueue,
        workflowId: budgetWorkflowId(team),
        args: [{ team, budget: b, historyEventLimit: 12 }],
      });
      const granted = await ledger.reserve(team, b, { key: 'a', gpuHours: 4 });
      const settled = await ledger.settle(team, b, { key: 'a', gpuHours: 3 });
      await ledger.reserve(team, b, { key: 'b', gpuHours: 2 });
      for (let i = 0; i < 6; i++) await ledger.report(team); // history past the limit
      const handle = env.client.workflow.getHandle(budgetWorkflowId(team));
      const now = await handle.describe();
      assert.notEqual(now.runId, first.firstExecutionRunId, 'continued as new');
      // The same keys again after continue-as-new: the same answers, nothing counted twice.
      assert.deepEqual(await ledger.reserve(team, b, { key: 'a', gpuHours: 4 }), {
        status: 'granted',
        gpuHours: 3,
      });
      assert.deepEqual(await ledger.settle(team, b, { key: 'a', gpuHours: 3 }), settled);
      assert.deepEqual(await ledger.reserve(team, b, { key: 'b', gpuHours: 2 }), {
        status: 'granted',
        gpuHours: 2,
      });
      const r = await ledger.report(team);
      assert.deepEqual([r?.spent, r?.reserved], [3, 2]);
      assert.equal(granted.status, 'granted');
    });
  });

  it('starts a new period with nothing spent (UTC week)', async () => {
    await withBudgets(async (ledger) => {
      const team = uniqueId('period');
      const b = budget('refuse');
      await ledger.reserve(team, b, { key: 'a', gpuHours: 9 });
      await ledger.settle(team, b, { key: 'a', gpuHours: 9 });
      assert.equal((await ledger.reserve(team, b, { key: 'b', gpuHours: 2 })).status, 'refused');
      const before = await ledger.report(team);
      await env.sleep('8 days');
      const after = await ledger.report(team);
      assert.notEqual(after?.periodStart, before?.periodStart);
      assert.equal(after?.spent, 0);
      assert.equal((await ledger.reserve(team, b, { key: 'c', gpuHours: 2 })).status, 'granted');
    });
  });
});
