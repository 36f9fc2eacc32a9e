/**
 * Records the history of a campaign whose first attempt fails and whose second resumes (stand-in
 * activities, time-skipping server) into test/workflows/histories/, for the replay test. Re-record
 * only on purpose (see record-history.ts).
 *   npx tsx test/helpers/record-campaign-history.ts
 */
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { fakeActivities } from './fake-activities.js';
import { fakeCampaignWorld } from './fake-campaign-world.js';
import { testInput, testSpec } from './specs.js';
import { timeSkippingEnv, workflowBundle } from './temporal.js';

const env = await timeSkippingEnv();
try {
  const world = fakeCampaignWorld(() => env.client, { failAt: (attempt, step) => attempt === 1 && step === 15 });
  const { activities } = fakeActivities(world.overrides);
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'record', workflowBundle: await workflowBundle(), activities });
  const spec = testSpec();
  const history = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('campaign', {
      taskQueue: 'record',
      workflowId: 'recorded-campaign',
      args: [{ spec, budgets: { maxAttempts: 3, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 }, provenance: testInput().provenance }],
    });
    await handle.result();
    return handle.fetchHistory();
  });
  await writeFile(new URL('../workflows/histories/campaign-resumed.json', import.meta.url), historyToJSON(history));
  console.log(`recorded ${history.events?.length} events`);
} finally {
  await env.teardown();
}
