/**
 * Records the history of a small successful sweep (3 children, 2 at a time; fake activities,
 * time-skipping server) into test/workflows/histories/, for the replay test. Re-record only on
 * purpose: a replay failure means a change would break running sweeps (use patching instead).
 *   npx tsx test/helpers/record-sweep-history.ts
 */
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { fakeActivities } from './fake-activities.js';
import { seedSweep, sweepInput } from './sweeps.js';
import { timeSkippingEnv, workflowBundle } from './temporal.js';

const env = await timeSkippingEnv();
try {
  const { activities } = fakeActivities();
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'record', workflowBundle: await workflowBundle(), activities });
  const history = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('sweep', { taskQueue: 'record', workflowId: 'recorded-sweep', args: [sweepInput(seedSweep([1, 2, 3], { concurrency: 2 }))] });
    await handle.result();
    return handle.fetchHistory();
  });
  await writeFile(new URL('../workflows/histories/sweep-succeeded.json', import.meta.url), historyToJSON(history));
  console.log(`recorded ${history.events?.length} events`);
} finally {
  await env.teardown();
}
