/**
 * Records the history of a successful experiment (fake activities, time-skipping server) into
 * test/workflows/histories/, for the replay test. Re-record only on purpose: a replay failure means
 * the workflow code changed in a way that breaks running workflows (use patching instead).
 *   npx tsx test/helpers/record-history.ts
 */
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { fakeActivities } from './fake-activities.js';
import { testInput } from './specs.js';
import { timeSkippingEnv, workflowBundle } from './temporal.js';

const env = await timeSkippingEnv();
try {
  const { activities } = fakeActivities();
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: 'record', workflowBundle: await workflowBundle(), activities });
  const history = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('experiment', { taskQueue: 'record', workflowId: 'recorded-experiment', args: [testInput()] });
    await handle.result();
    return handle.fetchHistory();
  });
  await writeFile(new URL('../workflows/histories/experiment-succeeded.json', import.meta.url), historyToJSON(history));
  console.log(`recorded ${history.events?.length} events`);
} finally {
  await env.teardown();
}
