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

/**
 * Heartbeats every `everyMs` until `work` settles, for activities that wait on one long call
 * (a cluster's start or deletion): with a heartbeat timeout, a worker lost in the middle is noticed
 * in seconds instead of at the start-to-close timeout. Outside an activity it only awaits.
 */
export async function heartbeatWhile<T>(work: Promise<T>, everyMs = 5_000): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work;
  }
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
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
