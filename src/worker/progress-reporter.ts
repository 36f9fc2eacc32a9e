import type { Client } from '@temporalio/client';
import { PROGRESS_SIGNAL, type Progress, STOP_AT_CHECKPOINT_PENDING_QUERY } from '../domain/run/progress.js';

/** Activities report progress to their workflow as a signal, so its queries answer live. */
export function signalProgress(client: Client) {
  return async (workflowId: string, progress: Progress): Promise<void> => {
    await client.workflow.getHandle(workflowId).signal(PROGRESS_SIGNAL, progress);
  };
}

/** Asks an experiment whether a pause waits for its next checkpoint (a query: no history event). */
export function queryStopAtCheckpointPending(client: Client) {
  return async (workflowId: string): Promise<boolean> =>
    client.workflow.getHandle(workflowId).query<boolean>(STOP_AT_CHECKPOINT_PENDING_QUERY);
}
