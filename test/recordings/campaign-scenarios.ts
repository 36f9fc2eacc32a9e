import type { CampaignInput, CampaignProgress } from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { extendUpdate, pauseUpdate, resumeUpdate } from '../../src/workflows/campaign-definitions.js';
import { stopAtCheckpointPendingQuery } from '../../src/workflows/experiment-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { fakeCampaignWorld } from '../helpers/fake-campaign-world.js';
import { type Scenario, until } from '../helpers/history-recorder.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { StepGate } from '../helpers/step-gate.js';

function campaignInput(
  totalTrainingSteps: number,
  extra: Partial<CampaignInput['spec']> = {},
): CampaignInput {
  const spec = testSpec(extra);
  spec.trainer.totalTrainingSteps = totalTrainingSteps;
  spec.trainer.saveFreq = 10;
  return {
    spec,
    budgets: { maxAttempts: 3, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
    provenance: testInput().provenance,
  };
}

/** Campaigns: an attempt fails and the next resumes; a user pauses, resumes and extends one. */
export const campaignScenarios: Record<string, Scenario> = {
  'campaign-failed-then-resumed': (client) => {
    const world = fakeCampaignWorld(client, { failAt: (attempt, step) => attempt === 1 && step === 15 });
    return {
      workflowId: 'campaign-failed-then-resumed',
      workflowType: 'campaign',
      // storage.retain: the retention activity runs between attempts.
      args: [campaignInput(20, { storage: { ...testSpec().storage, retain: { latest: 1 } } })],
      activities: fakeActivities(world.overrides).activities,
      children: () => ['campaign-failed-then-resumed-a1'],
    };
  },

  // Kueue preempted the first attempt's cluster: the attempt is `preempted` (1.1.0/campaign-preempted,
  // recorded before, has it `failed`).
  'campaign-preempted-outcome': (client) => {
    const world = fakeCampaignWorld(client, {
      failAt: (attempt, step) => attempt === 1 && step === 15,
      failType: ErrorTypes.ClusterPreempted,
    });
    return {
      workflowId: 'campaign-preempted-outcome',
      workflowType: 'campaign',
      args: [campaignInput(20)],
      activities: fakeActivities(world.overrides).activities,
      children: () => ['campaign-preempted-outcome-a1'],
    };
  },

  'campaign-paused-resumed-extended': (client) => {
    // Lockstep: the trainer waits before step 11 until the attempt holds the pause, trains to the
    // next checkpoint (20) and waits there for the pause; the second attempt waits before step 21
    // until the extend is in.
    const gate = new StepGate(10);
    const world = fakeCampaignWorld(client, { gate });
    const progress = async (h: { query: <T>(name: string) => Promise<T> }) =>
      h.query<CampaignProgress>('progress').catch(() => undefined);
    return {
      workflowId: 'campaign-paused-resumed-extended',
      workflowType: 'campaign',
      args: [campaignInput(30)],
      activities: fakeActivities(world.overrides).activities,
      drive: async (handle) => {
        const at = async (ok: (p: CampaignProgress) => boolean) => {
          const p = await progress(handle);
          return p !== undefined && ok(p);
        };
        await until('checkpoint 10', () => at((p) => p.phase === 'running' && p.lastCheckpointStep >= 10));
        await handle.executeUpdate(pauseUpdate);
        await until('the attempt to hold the pause', () =>
          client()
            .workflow.getHandle('campaign-paused-resumed-extended-a1')
            .query(stopAtCheckpointPendingQuery)
            .catch(() => false),
        );
        gate.releaseTo(20);
        await until('the pause', () => at((p) => p.phase === 'paused'));
        await handle.executeUpdate(resumeUpdate);
        await until('the second attempt', () => at((p) => p.phase === 'running' && p.attempt === 2));
        await handle.executeUpdate(extendUpdate, { args: [10] });
        gate.releaseTo(Infinity);
      },
      // The first attempt ends `paused` (stopAtNextCheckpoint): the experiment's pause path.
      children: () => ['campaign-paused-resumed-extended-a1'],
    };
  },
};
