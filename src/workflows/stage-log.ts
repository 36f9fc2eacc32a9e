import { log } from '@temporalio/workflow';

/**
 * One log line per stage (or phase) change. The SDK adds workflowId, runId and workflowType to the
 * line and drops it during replay, so history-driven re-execution does not repeat it.
 */
export function logStage(stage: string, attempt: number, fields: Record<string, unknown> = {}): void {
  log.info(`stage ${stage}`, { stage, attempt, ...fields });
}
