import type { Client } from '@temporalio/client';
import { PROGRESS_SIGNAL, type Progress } from './domain/progress.js';

/** Activities report progress to their workflow as a signal, so its queries answer live. */
export function signalProgress(client: Client) {
  return async (workflowId: string, progress: Progress): Promise<void> => {
    await client.workflow.getHandle(workflowId).signal(PROGRESS_SIGNAL, progress);
  };
}
