import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { timeSkippingEnv, workflowBundle } from './temporal.js';

/** What one recording runs: a workflow to completion with the given (fake) activities. */
export interface Recording {
  activities: object;
  workflowType: string;
  workflowId: string;
  args: unknown[];
}

/**
 * Runs one workflow on the time-skipping server and writes its history to
 * test/workflows/histories/<file>, for the replay tests. Shared by the record-*-history scripts.
 */
export async function recordHistory(
  file: string,
  setup: (env: TestWorkflowEnvironment) => Recording,
): Promise<void> {
  const env = await timeSkippingEnv();
  try {
    const { activities, workflowType, workflowId, args } = setup(env);
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'record',
      workflowBundle: await workflowBundle(),
      activities,
    });
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(workflowType, { taskQueue: 'record', workflowId, args });
      await handle.result();
      return handle.fetchHistory();
    });
    await writeFile(new URL(`../workflows/histories/${file}`, import.meta.url), historyToJSON(history));
    console.log(`recorded ${history.events?.length} events into ${file}`);
  } finally {
    await env.teardown();
  }
}
