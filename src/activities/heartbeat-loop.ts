import { Context } from '@temporalio/activity';

/**
 * Sleep between polls through the activity context: it heartbeats first, so the server learns both
 * that the worker is alive and, in reply, that the activity was cancelled (ctx.sleep then rejects).
 */
export async function heartbeatAndWait(details: unknown, ms: number): Promise<void> {
  const ctx = Context.current();
  ctx.heartbeat(details);
  await ctx.sleep(ms);
}

/** Heartbeat details from the previous attempt of this activity, if any. */
export function previousDetails<T>(): T | undefined {
  return Context.current().info.heartbeatDetails as T | undefined;
}

export function workflowIdOfActivity(): string {
  return Context.current().info.workflowExecution?.workflowId ?? '';
}

/** For hashCheckpoint's onFile: one heartbeat per hashed file, so the hashing profile's heartbeat timeout holds. */
export function heartbeatPerFile(step: number): (file: string) => void {
  const ctx = Context.current();
  return (file) => ctx.heartbeat({ step, file });
}
