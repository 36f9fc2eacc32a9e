/**
 * Records the history of a small successful sweep (3 children, 2 at a time; fake activities,
 * time-skipping server) into test/workflows/histories/, for the replay test. Re-record only on
 * purpose: a replay failure means a change would break running sweeps (use patching instead).
 *   npx tsx test/helpers/record-sweep-history.ts
 */
import { fakeActivities } from './fake-activities.js';
import { recordHistory } from './history-recorder.js';
import { seedSweep, sweepInput } from './sweeps.js';

await recordHistory('sweep-succeeded.json', () => ({
  activities: fakeActivities().activities,
  workflowType: 'sweep',
  workflowId: 'recorded-sweep',
  args: [sweepInput(seedSweep([1, 2, 3], { concurrency: 2 }))],
}));
