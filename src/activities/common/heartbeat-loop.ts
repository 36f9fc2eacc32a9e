import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { RetryOptions } from '../../errors/retry-transient.js';

/**
 * The last details each running activity heartbeated: a heartbeat sent only to stay alive (while
 * a request is retried) repeats them, so a retry after a lost worker still resumes from them.
 */
const lastDetails = new WeakMap<Context, unknown>();

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // outside an activity (a CLI command, a bench)
  }
}

/** Heartbeat `details` and remember them for keep-alive heartbeats. */
export function beat(details: unknown): void {
  const ctx = Context.current();
  lastDetails.set(ctx, details);
  ctx.heartbeat(details);
}

/** Heartbeat the last details again (or the previous attempt's, before this attempt sent any). */
function keepAlive(ctx: Context): void {
  ctx.heartbeat(lastDetails.has(ctx) ? lastDetails.get(ctx) : ctx.info.heartbeatDetails);
}

/**
 * Sleep between polls through the activity context: it heartbeats first, so the server learns both
 * that the worker is alive and, in reply, that the activity was cancelled (ctx.sleep then rejects).
 */
export async function heartbeatAndWait(details: unknown, ms: number): Promise<void> {
  beat(details);
  await Context.current().sleep(ms);
}

/**
 * Heartbeats every `everyMs` until `work` settles, for activities that wait on one long call
 * (a cluster's start or deletion): with a heartbeat timeout, a worker lost in the middle is noticed
 * in seconds instead of at the start-to-close timeout. Outside an activity it only awaits.
 */
export async function heartbeatWhile<T>(work: Promise<T>, everyMs = 5_000): Promise<T> {
  const ctx = currentContext();
  if (!ctx) return work;
  keepAlive(ctx);
  const timer = setInterval(() => keepAlive(ctx), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/** Wait `ms`, alive: a heartbeat with the last details, then a sleep that a cancel ends. */
async function waitAlive(ms: number): Promise<void> {
  const ctx = currentContext();
  if (!ctx) return sleep(ms);
  keepAlive(ctx);
  await ctx.sleep(ms);
}

/**
 * In-place retries of external calls from inside an activity (the Ray dashboard client): it stays
 * alive while it waits and while a slow request hangs, and each retry is logged with its rule.
 */
export const activityRetry: Partial<RetryOptions> = {
  wait: waitAlive,
  during: (attempt) => heartbeatWhile(attempt),
  onRetry: ({ what, rule, attempt, delayMs, error }) => {
    const ctx = currentContext();
    const line = `transient failure of ${what} (${rule.name}), try ${attempt}; again in ${delayMs} ms: ${error.message}`;
    if (ctx) ctx.log.warn(line, { retry: what, rule: rule.name, attempt });
  },
};

/** Heartbeat details from the previous attempt of this activity, if any. */
export function previousDetails<T>(): T | undefined {
  return Context.current().info.heartbeatDetails as T | undefined;
}

export function workflowIdOfActivity(): string {
  return Context.current().info.workflowExecution?.workflowId ?? '';
}

/** For hashCheckpoint's onFile: one heartbeat per hashed file, so the hashing profile's heartbeat timeout holds. */
export function heartbeatPerFile(step: number): (file: string) => void {
  return (file) => beat({ step, file });
}
