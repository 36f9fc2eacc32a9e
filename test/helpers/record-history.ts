/**
 * Records the history of a successful experiment (fake activities, time-skipping server) into
 * test/workflows/histories/, for the replay test. Re-record only on purpose: a replay failure means
 * the workflow code changed in a way that breaks running workflows (use patching instead).
 *   npx tsx test/helpers/record-history.ts
 */
import { fakeActivities } from './fake-activities.js';
import { recordHistory } from './history-recorder.js';
import { testInput } from './specs.js';

await recordHistory('experiment-succeeded.json', () => ({
  activities: fakeActivities().activities,
  workflowType: 'experiment',
  workflowId: 'recorded-experiment',
  args: [testInput()],
}));
