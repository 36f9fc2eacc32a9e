import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities/index.js';
import type {
  CampaignBudgets,
  CampaignInput,
  CampaignProgress,
  CampaignResult,
} from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { WorkflowStatus } from '../../src/domain/run/workflow-status.js';
import type { campaign } from '../../src/workflows/campaign.js';
import { extendUpdate, pauseUpdate, resumeUpdate } from '../../src/workflows/campaign-definitions.js';
import { stopAtCheckpointPendingQuery } from '../../src/workflows/experiment-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { fakeCampaignWorld } from '../helpers/fake-campaign-world.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { StepGate } from '../helpers/step-gate.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { waitUntil } from '../helpers/wait.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const budgets = (b: Partial<CampaignBudgets> = {}): CampaignBudgets => ({
  maxAttempts: 5,
  maxAttemptsWithoutNewCheckpoint: 2,
  historyEventsBeforeContinueAsNew: 2000,
  ...b,
});

function campaignInput(b: Partial<CampaignBudgets> = {}, total = 20): CampaignInput {
  const spec = testSpec();
  spec.trainer.totalTrainingSteps = total;
  spec.trainer.saveFreq = 10;
  return { spec, budgets: budgets(b), provenance: testInput().provenance };
}

async function runCampaign(
  world: ReturnType<typeof fakeCampaignWorld>,
  input: CampaignInput,
  during?: (id: string, calls: string[]) => Promise<void>,
) {
  const { activities, calls } = fakeActivities(world.overrides);
  const taskQueue = uniqueId('tq-campaign');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const workflowId = uniqueId('campaign');
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof campaign>('campaign', {
      taskQueue,
      workflowId,
      args: [input],
    });
    if (during) await during(workflowId, calls);
    try {
      return { result: await handle.result(), error: undefined };
    } catch (error) {
      return { result: undefined, error };
    }
  });
  return { ...outcome, calls, workflowId };
}

function failure(error: unknown): { type?: string; result?: CampaignResult } {
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  const cause = error.cause as ApplicationFailure;
  return { type: cause.type ?? undefined, result: cause.details?.[0] as CampaignResult | undefined };
}

/** The campaign's progress once `predicate` holds (before its first workflow task, the query fails). */
function waitFor(
  id: string,
  predicate: (p: CampaignProgress) => boolean,
  what: string,
): Promise<CampaignProgress> {
  const handle = env.client.workflow.getHandle(id);
  return waitUntil(what, async () => {
    const p = await handle.query<CampaignProgress>('progress');
    return predicate(p) ? p : undefined;
  });
}

/** Resolves once the attempt's experiment holds the pause (it waits for its next checkpoint). */
const attemptHoldsPause = (attemptId: string) =>
  waitUntil(`${attemptId} to hold the pause`, () =>
    env.client.workflow.getHandle(attemptId).query(stopAtCheckpointPendingQuery),
  );

describe('campaign workflow (time-skipping server, stand-in trainer and storage)', () => {
  it('resumes the next attempt from the latest complete checkpoint after a training failure, with lineage', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => attempt === 1 && step === 15,
    });
    const { result, calls, workflowId } = await runCampaign(world, campaignInput());
    assert.equal(result?.outcome, 'succeeded', JSON.stringify(result));
    assert.equal(result?.attempts.length, 2);
    assert.deepEqual(
      world.trains.map((t) => t.resumeFrom?.split('/').at(-1)),
      [undefined, 'global_step_10'],
    );
    assert.equal(
      new Set(world.trains.map((t) => t.checkpointDir)).size,
      1,
      'all attempts share the campaign checkpoint dir',
    );
    const [a1, a2] = result?.attempts ?? [];
    assert.equal(a1?.workflowId, `${workflowId}-a1`);
    assert.equal(a1?.ended.type, ErrorTypes.TrainingFailed);
    assert.equal(a2?.startedFromStep, 10);
    assert.equal(a2?.previousEnded?.type, ErrorTypes.TrainingFailed);
    assert.equal(a2?.finalStep, 20);
    assert.equal(calls.filter((c) => c === 'teardown').length, 2, 'each attempt tears its cluster down');
    const draft = world.campaignManifests.at(-1)?.draft;
    assert.equal(draft?.outcome, 'succeeded');
    assert.deepEqual(
      draft?.attempts.map((a) => a.manifestPath),
      [`/fake/${workflowId}-a1/manifest.json`, `/fake/${workflowId}-a2/manifest.json`],
    );
    assert.ok((result?.gpuSeconds ?? 0) > 0);
  });

  it('fails with CampaignStalled after maxAttemptsWithoutNewCheckpoint attempts without a new checkpoint', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => step === (attempt === 1 ? 12 : 11),
    });
    const { error } = await runCampaign(world, campaignInput({ maxAttemptsWithoutNewCheckpoint: 2 }));
    const { type, result } = failure(error);
    assert.equal(type, ErrorTypes.CampaignStalled);
    // Attempt 1 made checkpoint 10; attempts 2 and 3 resumed from it and made none.
    assert.deepEqual(
      result?.attempts.map((a) => a.startedFromStep),
      [0, 10, 10],
    );
    assert.match(result?.reason ?? '', /2 attempts in a row ended without a new checkpoint/);
    assert.equal(world.campaignManifests.at(-1)?.draft.outcome, 'failed');
  });

  it('fails with CampaignAttemptsExhausted after maxAttempts, even while checkpoints advance', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => step === attempt * 10 + 1,
    });
    const { error } = await runCampaign(world, campaignInput({ maxAttempts: 2 }, 40));
    const { type, result } = failure(error);
    assert.equal(type, ErrorTypes.CampaignAttemptsExhausted);
    assert.equal(result?.attempts.length, 2);
    assert.deepEqual(
      result?.attempts.map((a) => a.checkpointStepAfter),
      [10, 20],
    );
  });

  it('fails at once on a failure no attempt can fix (storage not writable), creating nothing', async () => {
    const world = fakeCampaignWorld(() => env.client);
    world.overrides.preflight = async () => {
      throw ApplicationFailure.create({
        type: ErrorTypes.StorageNotWritable,
        message: 'stand-in: storage not writable',
        nonRetryable: true,
      });
    };
    const { error, calls } = await runCampaign(world, campaignInput());
    const { type, result } = failure(error);
    assert.equal(type, ErrorTypes.StorageNotWritable);
    assert.equal(result?.attempts.length, 1);
    assert.ok(!calls.includes('submitCluster') && !calls.includes('teardown'), 'no cluster was created');
  });

  it('fails at once when the all-reduce probe cannot be loaded on the image: one attempt, one cluster', async () => {
    const world = fakeCampaignWorld(() => env.client);
    world.overrides.allReduceCheck = async () => {
      throw ApplicationFailure.create({
        type: ErrorTypes.ProbeUnavailable,
        message: 'stand-in: ragen_probes.allreduce: No module named numpy',
        nonRetryable: true,
      });
    };
    const { error, calls } = await runCampaign(world, campaignInput());
    const { type, result } = failure(error);
    assert.equal(type, ErrorTypes.ProbeUnavailable);
    assert.equal(result?.attempts.length, 1);
    assert.equal(calls.filter((c) => c === 'submitCluster').length, 1);
  });

  it('continues as new past the history threshold without losing lineage', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => step === attempt * 10 + 1 && attempt < 3,
    });
    const { result, error, workflowId } = await runCampaign(
      world,
      campaignInput({ historyEventsBeforeContinueAsNew: 10 }, 30),
    );
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded', JSON.stringify(result));
    assert.deepEqual(
      result?.attempts.map((a) => a.workflowId),
      [1, 2, 3].map((n) => `${workflowId}-a${n}`),
    );
    assert.deepEqual(
      result?.attempts.map((a) => a.startedFromStep),
      [0, 10, 20],
    );
    assert.ok(
      (result?.historyEventsPerRun.length ?? 0) >= 3,
      `runs: ${JSON.stringify(result?.historyEventsPerRun)}`,
    );
    const runs = result?.historyEventsPerRun ?? [];
    const lastRun = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events?.length ?? 0;
    assert.ok(lastRun < runs.reduce((a, b) => a + b, 0), 'the last run starts a fresh history');
    console.log(`history events per run (one attempt each): ${JSON.stringify(result?.historyEventsPerRun)}`);
  });

  it('pauses after the next checkpoint with the cluster torn down, then resumes from it', async () => {
    // Lockstep: the trainer waits before step 11 until the attempt holds the pause, then may train
    // up to the next checkpoint (20) and waits there, where the pause's cancel reaches it.
    const gate = new StepGate(10);
    const world = fakeCampaignWorld(() => env.client, { gate });
    let pausedAt = 0;
    const { result } = await runCampaign(world, campaignInput({}, 40), async (id, calls) => {
      const handle = env.client.workflow.getHandle(id);
      await gate.held(11);
      await waitFor(id, (p) => p.phase === 'running' && p.lastCheckpointStep === 10, 'checkpoint 10');
      const asked = await handle.executeUpdate(pauseUpdate);
      assert.equal(asked.paused, true, 'the Update answers the new state');
      assert.equal(asked.lastCheckpointStep, 10);
      await attemptHoldsPause(`${id}-a1`);
      gate.releaseTo(20);
      const paused = await waitFor(id, (p) => p.phase === 'paused', 'the pause');
      // The next checkpoint after the pause reached the trainer: the one after what the Update saw.
      pausedAt = paused.lastCheckpointStep;
      assert.equal(pausedAt, 20, `stopped after the next checkpoint: asked at 10, paused at ${pausedAt}`);
      assert.equal(calls.filter((c) => c === 'teardown').length, 1, 'the cluster is released while paused');
      assert.equal(calls.at(-1) === 'teardown' || calls.at(-1) === 'latestCompleteCheckpoint', true);
      gate.releaseTo(Infinity);
      await handle.executeUpdate(resumeUpdate);
    });
    assert.equal(result?.outcome, 'succeeded', JSON.stringify(result));
    assert.deepEqual(
      result?.attempts.map((a) => a.outcome),
      ['paused', 'succeeded'],
    );
    assert.equal(result?.attempts[1]?.startedFrom?.split('/').at(-1), `global_step_${pausedAt}`);
    assert.equal(result?.attempts[1]?.previousEnded?.type, 'paused');
  });

  it('extends the total steps of a running campaign (an Update that refuses a bad count)', async () => {
    // Lockstep: the first attempt waits before step 6 until the Updates are done.
    const gate = new StepGate(5);
    const world = fakeCampaignWorld(() => env.client, { gate });
    const { result } = await runCampaign(world, campaignInput({}, 20), async (id) => {
      const handle = env.client.workflow.getHandle(id);
      await gate.held(6);
      await waitFor(id, (p) => p.phase === 'running', 'training');
      await assert.rejects(handle.executeUpdate(extendUpdate, { args: [-5] }), (err: Error) => {
        assert.ok(err instanceof WorkflowUpdateFailedError, String(err));
        assert.match(String(err.cause?.message), /positive whole number of steps, not -5/);
        return true;
      });
      await assert.rejects(handle.executeUpdate(resumeUpdate), (err: Error) =>
        /not paused/.test(String((err.cause as Error | undefined)?.message)),
      );
      const extended = await handle.executeUpdate(extendUpdate, { args: [10] });
      assert.equal(extended.totalTrainingSteps, 30);
      const status = await handle.query<WorkflowStatus>('status');
      assert.equal(status.kind, 'campaign', '`status <campaign id>` gets an answer');
      assert.equal(status.kind === 'campaign' && status.totalTrainingSteps, 30);
      gate.releaseTo(Infinity);
    });
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.finalStep, 30);
    assert.deepEqual(
      world.trains.map((t) => t.total),
      [20, 30],
    );
    assert.equal(world.trains[1]?.resumeFrom?.split('/').at(-1), 'global_step_20');
  });

  it('cancels gracefully during training: the attempt archives and tears down, the manifest says cancelled', async () => {
    // Lockstep: the trainer waits before step 11, where the cancel reaches it.
    const gate = new StepGate(10);
    const world = fakeCampaignWorld(() => env.client, { gate });
    const { error, calls } = await runCampaign(world, campaignInput({}, 100), async (id) => {
      await gate.held(11);
      await waitFor(id, (p) => p.lastCheckpointStep === 10, 'training');
      await env.client.workflow.getHandle(id).cancel();
    });
    assert.ok(error instanceof WorkflowFailedError);
    assert.equal(error.cause?.name, 'CancelledFailure');
    assert.ok(calls.includes('archive') && calls.includes('teardown'));
    assert.equal(world.campaignManifests.at(-1)?.draft.outcome, 'cancelled');
    assert.equal(world.campaignManifests.at(-1)?.draft.attempts[0]?.outcome, 'cancelled');
  });
});

describe('campaign checkpoint retention and GPU-seconds (time-skipping server, stand-in storage)', () => {
  it('asks the retention activity between attempts, protecting the resume candidate; sums GPU-seconds', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => attempt === 1 && step === 15,
    });
    const asked: Parameters<Activities['applyCheckpointRetention']>[0][] = [];
    world.overrides.applyCheckpointRetention = async (input) => {
      asked.push(input);
      return { kept: [], deleted: [] };
    };
    const input = campaignInput();
    input.spec.storage.retain = { latest: 1 };
    const { result } = await runCampaign(world, input);
    assert.equal(result?.outcome, 'succeeded');
    const beforeSecond = asked.find((a) => a.protect.some((p) => p.step === 10));
    assert.deepEqual(beforeSecond?.protect, [{ step: 10, why: 'the resume candidate' }]);
    assert.deepEqual(beforeSecond?.retain, { latest: 1 });
    const draft = world.campaignManifests.at(-1)?.draft;
    const perAttempt = draft?.attempts.map((a) => a.gpuUsage?.allocatedSeconds ?? -1) ?? [];
    assert.equal(perAttempt.length, 2);
    assert.ok(perAttempt.every((s) => s >= 0));
    // The campaign's total is the attempts' sum (each in ms-rounded seconds: compare as floats).
    const total = draft?.gpuUsage?.allocatedSeconds ?? NaN;
    const sum = perAttempt.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(total - sum) < 1e-9, `total ${total}, sum of attempts ${sum}`);
  });
});

describe('campaign: a preempted attempt (Kueue took its cluster)', () => {
  it('is recorded `preempted`, uses up no attempt, and the next resumes from the latest checkpoint', async () => {
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => attempt === 1 && step === 15,
      failType: ErrorTypes.ClusterPreempted,
    });
    // maxAttempts 1: only an attempt that is not a preemption counts, so the second may run.
    const { result, error } = await runCampaign(world, campaignInput({ maxAttempts: 1 }));
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    const [preempted, resumed] = result!.attempts;
    assert.equal(preempted?.outcome, 'preempted');
    assert.equal(preempted.ended.type, ErrorTypes.ClusterPreempted);
    assert.equal(resumed?.outcome, 'succeeded');
    assert.equal(resumed.startedFromStep, 10);
  });
});
