import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { CampaignInput, CampaignResult } from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { campaign } from '../../src/workflows/campaign.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { fakeCampaignWorld } from '../helpers/fake-campaign-world.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * Campaign outcomes that match what the trainer did (issue 13, item 4): an early stop ends the
 * campaign with that outcome, a configuration error ends it at once on its first cluster, and a
 * checkpoint already at totalTrainingSteps trains nothing more.
 */
let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

function campaignInput(total = 20): CampaignInput {
  const spec = testSpec();
  spec.trainer.totalTrainingSteps = total;
  spec.trainer.saveFreq = 10;
  return {
    spec,
    budgets: { maxAttempts: 5, maxAttemptsWithoutNewCheckpoint: 3, historyEventsBeforeContinueAsNew: 2000 },
    provenance: testInput().provenance,
  };
}

async function runCampaign(world: ReturnType<typeof fakeCampaignWorld>, input: CampaignInput) {
  const { activities, calls } = fakeActivities(world.overrides);
  const taskQueue = uniqueId('tq-campaign-outcomes');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const workflowId = uniqueId('campaign-outcomes');
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof campaign>('campaign', {
      taskQueue,
      workflowId,
      args: [input],
    });
    try {
      return { result: await handle.result(), error: undefined };
    } catch (error) {
      return { result: undefined, error };
    }
  });
  return { ...outcome, calls };
}

function failure(error: unknown): { type?: string; result?: CampaignResult } {
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  const cause = error.cause as ApplicationFailure;
  return { type: cause.type ?? undefined, result: cause.details?.[0] as CampaignResult | undefined };
}

describe('campaign outcomes (time-skipping server, stand-in trainer and storage)', () => {
  it("ends earlyStopped with RAGEN's reason after one attempt: an early stop is not retried", async () => {
    const world = fakeCampaignWorld(() => env.client);
    world.overrides.train = async () => ({
      finalStep: 7,
      lastCheckpointStep: 0,
      lastMetrics: {},
      entrypoint: [],
      earlyStopped: { step: 7, reasons: ['low_validation_success'] },
    });
    const { result, error, calls } = await runCampaign(world, campaignInput());
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'earlyStopped');
    assert.equal(result?.attempts.length, 1);
    assert.equal(result?.attempts[0]?.outcome, 'earlyStopped');
    assert.match(result?.reason ?? '', /early stop at step 7: low_validation_success/);
    assert.equal(calls.filter((c) => c === 'submitCluster').length, 1);
    assert.ok(!calls.includes('validate'), 'an early-stopped run is not validated as a result');
    assert.equal(world.campaignManifests.at(-1)?.draft.outcome, 'earlyStopped');
  });

  it('ends at once on a configuration error (a bad override): one cluster, no second attempt', async () => {
    const world = fakeCampaignWorld(() => env.client);
    world.overrides.train = async () => {
      throw ApplicationFailure.create({
        type: ErrorTypes.TrainingConfigInvalid,
        message:
          "stand-in: the trainer refused its configuration (exit 2: config error: unknown override key 'algorithm.lrr')",
        nonRetryable: true,
      });
    };
    const { error, calls } = await runCampaign(world, campaignInput());
    const { type, result } = failure(error);
    assert.equal(type, ErrorTypes.TrainingConfigInvalid);
    assert.equal(result?.attempts.length, 1);
    assert.equal(calls.filter((c) => c === 'submitCluster').length, 1, 'clusters created for a bad override');
    assert.match(result?.reason ?? '', /another attempt cannot fix/);
  });

  it('retries a resource shortfall on a new cluster (another attempt may get the GPUs)', async () => {
    const world = fakeCampaignWorld(() => env.client);
    let trains = 0;
    const normal = world.overrides.train;
    world.overrides.train = async (input) => {
      if (++trains === 1)
        throw ApplicationFailure.create({
          type: ErrorTypes.TrainingResourceShortfall,
          message: 'stand-in: Total available GPUs 1 is less than total desired GPUs 2',
          nonRetryable: true,
        });
      return normal!(input);
    };
    const { result, error, calls } = await runCampaign(world, campaignInput());
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.attempts[0]?.ended.type, ErrorTypes.TrainingResourceShortfall);
    assert.equal(calls.filter((c) => c === 'submitCluster').length, 2);
  });

  it('trains nothing more from a checkpoint at totalTrainingSteps: the next attempt only validates', async () => {
    const world = fakeCampaignWorld(() => env.client);
    let validations = 0;
    world.overrides.validate = async ({ checkpointPath }) => {
      if (++validations === 1)
        throw ApplicationFailure.create({
          type: ErrorTypes.ValidationFailed,
          message: 'stand-in: validation job crashed',
          nonRetryable: true,
        });
      return {
        checkpoint: checkpointPath,
        step: 20,
        episodes: 32,
        seed: 123,
        success_rate: 0.5,
        mean_reward: 1,
        mean_actions: 3,
        records: [],
      };
    };
    const { result, error, calls } = await runCampaign(world, campaignInput());
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.attempts.length, 2);
    assert.equal(world.trains.length, 1, 'the second attempt submitted no training job');
    assert.equal(result?.attempts[1]?.startedFromStep, 20);
    assert.equal(result?.attempts[1]?.finalStep, 20);
    assert.equal(calls.filter((c) => c === 'train').length, 1);
  });
});
