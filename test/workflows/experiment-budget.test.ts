import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApplicationFailure } from '@temporalio/common';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createReserveBudget, createSettleBudget } from '../../src/activities/budget/budget.js';
import type { ActivityDeps } from '../../src/activities/index.js';
import { type BudgetLedgerClient, budgetLedgerClient } from '../../src/worker/budget-ledger-client.js';
import type { TeamBudget } from '../../src/domain/budget/budgets.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { ExperimentInput } from '../../src/domain/run/experiment-input.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { waitUntil } from '../helpers/wait.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/** A run of team `team` that reserves `estimate` GPU-hours (spec budget.estimateGpuHours). */
const inputOf = (team: string, estimate: number): ExperimentInput =>
  testInput(testSpec({ team, budget: { estimateGpuHours: estimate } }));

/**
 * The experiment with fake stages but the real budget activities, against the real teamBudget
 * workflow: budgets.yaml is `budgets` (no file: what a worker would read).
 */
async function runBudgeted(
  budgets: Record<string, TeamBudget>,
  input: ExperimentInput,
  during?: (workflowId: string, ledger: BudgetLedgerClient) => Promise<void>,
) {
  const taskQueue = uniqueId('budget-exp');
  const ledger = budgetLedgerClient(env.client, taskQueue);
  const deps = {
    budgets: { load: async () => ({ teams: budgets }), ledger },
    pollIntervalMs: 100,
    budgetPollIntervalMs: 100,
  } as unknown as ActivityDeps;
  const { activities, calls } = fakeActivities({
    reserveBudget: createReserveBudget(deps),
    settleBudget: createSettleBudget(deps),
    // A second of real time holding the cluster: a measurable allocation.
    train: async ({ spec }) => {
      await sleep(1000);
      const n = spec.trainer.totalTrainingSteps;
      return { finalStep: n, lastCheckpointStep: n, lastMetrics: {}, entrypoint: [] };
    },
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const workflowId = uniqueId('budget-run');
  // The budget workflow runs on the same task queue: the report is asked while the worker runs.
  const reportOf = () => (input.spec.team ? ledger.report(input.spec.team) : Promise.resolve(undefined));
  // A client that does not skip time: the budget workflow never ends, and skipping years while a
  // result is awaited would only move every period on.
  const client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  const outcome = await worker.runUntil(async () => {
    const handle = await client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId,
      args: [input],
    });
    if (during) await during(workflowId, ledger);
    try {
      return { result: await handle.result(), error: undefined, report: await reportOf() };
    } catch (error) {
      return { result: undefined, error, report: await reportOf() };
    }
  });
  return { ...outcome, calls, workflowId };
}

async function waitForStage(workflowId: string, stage: string): Promise<void> {
  const handle = env.client.workflow.getHandle(workflowId);
  await waitUntil(
    `the run to reach stage ${stage}`,
    async () => (await handle.query<string>('stage')) === stage,
  );
}

const week = (gpuHours: number, policy: TeamBudget['policy']): TeamBudget => ({
  gpuHours,
  period: 'week',
  policy,
});

describe('experiment with a team budget (time-skipping server, fake stages, real budget workflow)', () => {
  it('reserves after preflight, settles the measured allocation after teardown', async () => {
    const team = uniqueId('t');
    const { result, calls, report } = await runBudgeted({ [team]: week(10, 'refuse') }, inputOf(team, 4));
    assert.equal(result?.outcome, 'succeeded');
    assert.deepEqual(calls.slice(0, 3), ['preflight', 'reserveBudget', 'verify']);
    assert.ok(calls.indexOf('settleBudget') > calls.indexOf('teardown'), 'settled after teardown');
    const measured = result!.gpuUsage.allocatedSeconds / 3600;
    assert.ok(measured > 0, 'a measurable allocation');
    assert.equal(report?.reserved, 0, 'the reservation is gone');
    assert.ok(
      Math.abs((report?.spent ?? -1) - measured) < 1 / 3600,
      `spent ${report?.spent} = measured ${measured}`,
    );
  });

  it('is refused before anything is created, with the budget, the spend and the reservation', async () => {
    const team = uniqueId('t');
    const { error, calls, report } = await runBudgeted({ [team]: week(3, 'refuse') }, inputOf(team, 4));
    assert.ok(error instanceof WorkflowFailedError);
    const cause = error.cause as ApplicationFailure;
    assert.equal(cause.type, ErrorTypes.BudgetRefused);
    assert.match(
      cause.message,
      new RegExp(`budget of team ${team} is 3 GPU-hours per week .*spent 0.*reservation of 4 GPU-hours`),
    );
    assert.deepEqual(calls, ['preflight', 'reserveBudget']);
    assert.deepEqual([report?.spent, report?.reserved], [0, 0]);
  });

  it('waits in the queue (stage budget) and runs once a settle frees room', async () => {
    const team = uniqueId('t');
    const b = week(5, 'queue');
    const { result, report } = await runBudgeted(
      { [team]: b },
      inputOf(team, 4),
      async (workflowId, ledger) => {
        // Another run holds most of the budget: this one queues.
        assert.equal((await ledger.reserve(team, b, { key: 'other', gpuHours: 3 })).status, 'granted');
        await waitForStage(workflowId, 'budget');
        assert.equal((await ledger.report(team))?.queue.length, 1);
        await ledger.settle(team, b, { key: 'other', gpuHours: 0.5 });
      },
    );
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(report?.queue.length, 0);
    assert.equal(report?.reserved, 0);
    assert.ok((report?.spent ?? 0) > 0.5);
  });

  it('cancelled while queued: leaves the queue (settles 0), creates nothing', async () => {
    const team = uniqueId('t');
    const b = week(5, 'queue');
    const { error, calls, report } = await runBudgeted(
      { [team]: b },
      inputOf(team, 4),
      async (workflowId, ledger) => {
        await ledger.reserve(team, b, { key: 'other', gpuHours: 3 });
        await waitForStage(workflowId, 'budget');
        await env.client.workflow.getHandle(workflowId).cancel();
      },
    );
    assert.ok(error instanceof WorkflowFailedError);
    assert.equal(error.cause?.name, 'CancelledFailure');
    assert.ok(!calls.includes('submitCluster'));
    assert.ok(calls.includes('settleBudget'));
    assert.deepEqual([report?.queue.length, report?.spent, report?.reserved], [0, 0, 3]);
  });

  it('does not reserve or settle for a team without a budget', async () => {
    const team = uniqueId('t');
    const { result, calls, report } = await runBudgeted({}, inputOf(team, 4));
    assert.equal(result?.outcome, 'succeeded');
    assert.ok(calls.includes('reserveBudget') && !calls.includes('settleBudget'));
    assert.equal(report, undefined, 'no budget workflow was started');
  });
});
