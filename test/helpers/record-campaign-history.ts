/**
 * Records the history of a campaign whose first attempt fails and whose second resumes (stand-in
 * activities, time-skipping server) into test/workflows/histories/, for the replay test. Re-record
 * only on purpose (see record-history.ts).
 *   npx tsx test/helpers/record-campaign-history.ts
 */
import { fakeActivities } from './fake-activities.js';
import { fakeCampaignWorld } from './fake-campaign-world.js';
import { recordHistory } from './history-recorder.js';
import { testInput, testSpec } from './specs.js';

await recordHistory('campaign-resumed.json', (env) => {
  const world = fakeCampaignWorld(() => env.client, {
    failAt: (attempt, step) => attempt === 1 && step === 15,
  });
  return {
    activities: fakeActivities(world.overrides).activities,
    workflowType: 'campaign',
    workflowId: 'recorded-campaign',
    args: [
      {
        spec: testSpec(),
        budgets: {
          maxAttempts: 3,
          maxAttemptsWithoutNewCheckpoint: 2,
          historyEventsBeforeContinueAsNew: 2000,
        },
        provenance: testInput().provenance,
      },
    ],
  };
});
