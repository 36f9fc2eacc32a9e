import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities/index.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { expandSweep } from '../../src/domain/sweep/sweep-expand.js';
import type { SweepInput, SweepManifest, SweepResult } from '../../src/domain/sweep/sweep.js';
import type { WorkflowStatus } from '../../src/domain/run/workflow-status.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { waitUntil } from '../helpers/wait.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/**
 * Child experiments run on fake activities (stand-ins for Ray); `active` counts children between
 * their preflight and their teardown, so the bound is checked outside the workflow's own count.
 */
function trackedActivities(overrides: Partial<Activities> = {}, trainMs = 30) {
  const track = { active: 0, maxActive: 0, started: 0, tornDown: 0, archived: [] as SweepManifest[] };
  const { activities, calls } = fakeActivities({
    preflight: async () => {
      track.started++;
      track.active++;
      track.maxActive = Math.max(track.maxActive, track.active);
      return { checks: [] };
    },
    train: async ({ spec }) => {
      await sleep(trainMs);
      return {
        finalStep: spec.trainer.totalTrainingSteps,
        lastCheckpointStep: spec.trainer.totalTrainingSteps,
        lastMetrics: {},
        entrypoint: [],
      };
    },
    // Stand-in success rate from the child's seed, so the ranking has something to order.
    validate: async ({ spec, checkpointPath }) => ({
      checkpoint: checkpointPath,
      step: 1,
      episodes: 8,
      seed: spec.validation.seed,
      success_rate: (spec.trainer.seedTrain % 7) / 10,
      mean_reward: 0,
      mean_actions: 0,
      records: [],
    }),
    teardown: async () => {
      track.active--;
      track.tornDown++;
      return { alreadyGone: false };
    },
    archiveSweep: async ({ manifest }) => {
      track.archived.push(manifest);
      return {
        manifestPath: `/fake/${manifest.temporal.workflowId}/sweep.json`,
        csvPath: `/fake/${manifest.temporal.workflowId}/sweep.csv`,
        sha256: 'f'.repeat(64),
      };
    },
    ...overrides,
  });
  return { activities, calls, track };
}

async function runSweep(
  input: SweepInput,
  activities: Activities,
  during?: (workflowId: string) => Promise<void>,
  skipTime = true,
) {
  const taskQueue = uniqueId('sweep-tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    maxConcurrentWorkflowTaskExecutions: 50,
  });
  const workflowId = uniqueId('sweep');
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof sweep>('sweep', {
      taskQueue,
      workflowId,
      args: [input],
    });
    if (during) await during(workflowId);
    // Without skipping, the test server cannot jump to a 1-hour deadline timer while the child
    // experiments are cancelling it (it races the cancel and fails the child's workflow task).
    while (!skipTime && (await handle.describe()).status.name === 'RUNNING') await sleep(100);
    try {
      return { result: await handle.result(), error: undefined, workflowId, handle };
    } catch (error) {
      return { result: undefined, error, workflowId, handle };
    }
  });
}

function failedSweep(error: unknown): { type?: string; result?: SweepResult } {
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  const cause = error.cause as ApplicationFailure;
  return { type: cause.type ?? undefined, result: cause.details?.[0] as SweepResult | undefined };
}

const seeds = (n: number) => Array.from({ length: n }, (_, i) => 100 + i);

describe('sweep workflow (time-skipping server, fake child activities)', () => {
  it('never runs more children than the bound, runs each once with its deterministic id, ranks by success', async () => {
    const { activities, track } = trackedActivities();
    const spec = seedSweep(seeds(12), { concurrency: 3 });
    const { result, workflowId } = await runSweep(sweepInput(spec), activities);
    assert.ok(result);
    assert.equal(result.total, 12);
    assert.equal(result.succeeded, 12);
    assert.equal(track.started, 12, 'each parameter set ran exactly once');
    assert.ok(track.maxActive <= 3, `at most 3 children ran at once, saw ${track.maxActive}`);
    assert.equal(track.maxActive, 3, 'the bound was used (children overlapped)');
    assert.ok(result.maxRunning <= 3);
    // Ranked by the stand-in success (seed % 7) / 10, best first, ties by index.
    const expected = expandSweep(spec)
      .map((p, index) => ({ index, value: ((p['trainer.seedTrain'] as number) % 7) / 10 }))
      .sort((a, b) => b.value - a.value || a.index - b.index);
    assert.deepEqual(
      result.ranked.map((r) => r.index),
      expected.map((e) => e.index),
    );
    assert.deepEqual(
      result.ranked.map((r) => r.rank),
      expected.map((_, i) => i + 1),
    );
    for (const row of result.ranked) {
      assert.match(row.workflowId, new RegExp(`^${workflowId}-${row.index}-[0-9a-f]{8}$`));
      assert.equal(row.manifestPath, `/fake/${row.workflowId}/manifest.json`);
      assert.deepEqual(row.params, { 'trainer.seedTrain': 100 + row.index });
    }
    const manifest = track.archived[0];
    assert.equal(track.archived.length, 1);
    assert.equal(manifest?.outcome, 'succeeded');
    assert.deepEqual(manifest?.children, result.ranked);
    const child = await env.client.workflow.getHandle(result.ranked[0]?.workflowId ?? '').describe();
    assert.equal(child.status.name, 'COMPLETED');
  });

  it('ranks with direction min; answers the status query every workflow kind answers', async () => {
    const { activities } = trackedActivities();
    let status: WorkflowStatus | undefined;
    const { result } = await runSweep(
      sweepInput(
        seedSweep(seeds(5), {
          concurrency: 5,
          objective: { metric: 'validation.successRate', direction: 'min' },
        }),
      ),
      activities,
      async (id) => {
        status = await env.client.workflow.getHandle(id).query<WorkflowStatus>('status');
      },
    );
    assert.equal(status?.kind, 'sweep');
    assert.equal(status?.kind === 'sweep' && status.total, 5);
    const values = result?.ranked.map((r) => r.successRate ?? NaN) ?? [];
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
    );
  });

  it('stops starting children once the failure budget is spent; running ones finish; the sweep fails', async () => {
    const failing = async () => {
      throw ApplicationFailure.create({
        type: ErrorTypes.TrainingFailed,
        message: 'stand-in training failure',
        nonRetryable: true,
      });
    };
    const sequential = trackedActivities({ train: failing });
    const one = await runSweep(
      sweepInput(seedSweep(seeds(10), { concurrency: 1, failureBudget: 2 })),
      sequential.activities,
    );
    const { type, result } = failedSweep(one.error);
    assert.equal(type, ErrorTypes.SweepFailureBudgetExhausted);
    assert.equal(sequential.track.started, 2, 'no child started after the second failure');
    assert.equal(result?.failed, 2);
    assert.equal(result?.notStarted, 8);
    assert.equal(result?.stoppedByFailureBudget, true);
    assert.equal(sequential.track.tornDown, 2, 'each failed child tore its cluster down');
    assert.match(result?.ranked[0]?.error ?? '', /stand-in training failure/);
    assert.equal(
      sequential.track.archived[0]?.outcome,
      'failed',
      'the sweep manifest is archived on failure too',
    );

    const parallel = trackedActivities({ train: failing });
    const many = await runSweep(
      sweepInput(seedSweep(seeds(20), { concurrency: 4, failureBudget: 2 })),
      parallel.activities,
    );
    const r = failedSweep(many.error).result;
    assert.ok(
      parallel.track.started <= 2 + 4 - 1,
      `at most budget + concurrency - 1 started, saw ${parallel.track.started}`,
    );
    assert.equal(r?.failed, parallel.track.started, 'running children finished and were counted');
    assert.equal(parallel.track.active, 0);
  });

  it('counts a child whose cluster failed as failed and keeps the others running', async () => {
    let n = 0;
    const { activities, track } = trackedActivities({
      validate: async ({ spec, checkpointPath }) => {
        if (++n === 2)
          throw ApplicationFailure.create({
            type: ErrorTypes.ValidationFailed,
            message: 'stand-in',
            nonRetryable: true,
          });
        return {
          checkpoint: checkpointPath,
          step: 1,
          episodes: 8,
          seed: 1,
          success_rate: spec.trainer.seedTrain / 1000,
          mean_reward: 0,
          mean_actions: 0,
          records: [],
        };
      },
    });
    const { result } = await runSweep(sweepInput(seedSweep(seeds(4), { concurrency: 1 })), activities);
    assert.equal(result?.succeeded, 3);
    assert.equal(result?.failed, 1);
    assert.equal(track.started, 4);
    const failedRow = result?.ranked.at(-1);
    assert.equal(failedRow?.outcome, 'failed');
    assert.equal(failedRow?.rank, undefined);
    assert.equal(
      failedRow?.manifestPath,
      `/fake/${failedRow?.workflowId}/manifest.json`,
      "a failed child's manifest path is kept",
    );
  });

  it('cancelling the sweep cancels every running child and waits for each teardown', async () => {
    let training = 0;
    const { activities, track } = trackedActivities({
      train: async () => {
        training++;
        return heartbeatUntilCancelled();
      },
    });
    const { error, result, handle } = await runSweep(
      sweepInput(seedSweep(seeds(6), { concurrency: 3 })),
      activities,
      async (workflowId) => {
        const h = env.client.workflow.getHandle(workflowId);
        // Cancel once every running child is in training (the test server races cancels of activities that are just completing).
        await waitUntil('three children in training', () => training === 3);
        await h.cancel();
      },
      false,
    );
    assert.equal(result, undefined);
    assert.ok(error instanceof WorkflowFailedError);
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    assert.equal(track.started, 3, 'no child started after the cancel');
    assert.equal(track.tornDown, 3, 'every started child tore its cluster down before the sweep ended');
    const manifest = track.archived[0];
    assert.equal(manifest?.outcome, 'cancelled');
    assert.equal(manifest?.counts.cancelled, 3);
    for (const row of manifest?.children ?? []) {
      assert.equal((await env.client.workflow.getHandle(row.workflowId).describe()).status.name, 'CANCELLED');
    }
  });

  it('a 1,000-child sweep continues as new and keeps every result', { timeout: 600_000 }, async () => {
    const { activities, track } = trackedActivities({}, 0);
    const spec = seedSweep(seeds(1000), { concurrency: 50 });
    const started = Date.now();
    const { result, handle } = await runSweep(sweepInput(spec, { historyEventLimit: 2000 }), activities);
    const seconds = (Date.now() - started) / 1000;
    assert.ok(result);
    assert.equal(result.total, 1000);
    assert.equal(result.succeeded, 1000);
    assert.equal(
      new Set(result.ranked.map((r) => r.index)).size,
      1000,
      'every child result was kept across runs',
    );
    assert.equal(new Set(result.ranked.map((r) => r.workflowId)).size, 1000);
    assert.ok(result.runs > 1, `continued as new (${result.runs} runs)`);
    assert.equal(track.started, 1000, 'no child ran twice across continue-as-new');
    assert.ok(track.maxActive <= 50);
    const history = await handle.fetchHistory();
    console.log(
      `1000-child sweep: ${seconds.toFixed(1)} s, ${result.runs} runs, last run ${history.events?.length} events, ${(1000 / seconds).toFixed(1)} children/s`,
    );
  });
});
