import { setTimeout as sleep } from 'node:timers/promises';
import { type FailureRule, classifyExternalFailure } from './external-failures.js';

/** One retried failure, for the log: what was called, which rule, the try and the wait. */
export interface RetryEvent {
  what: string;
  rule: FailureRule;
  attempt: number;
  delayMs: number;
  error: Error;
}

/**
 * How a call is retried in place. The defaults suit a Ray dashboard on a busy head: a stall of a
 * minute (a GC pause, a loaded 2-core node, a dashboard restarting) costs retries, not the run.
 */
export interface RetryOptions {
  /** Stop retrying once this long has passed since the first failure; the last error is thrown. */
  budgetMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** The wait between tries (an activity heartbeats while it waits, and a cancel ends it). */
  wait: (ms: number) => Promise<void>;
  /** Around each try (an activity heartbeats during a long request). */
  during: <T>(attempt: Promise<T>) => Promise<T>;
  onRetry: (event: RetryEvent) => void;
  /** Errors the caller handles itself (a 404, a duplicate submission): never retried here. */
  handledByCaller: (err: unknown) => boolean;
}

export const DEFAULT_RETRY: RetryOptions = {
  budgetMs: 120_000,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  wait: (ms) => sleep(ms),
  during: (attempt) => attempt,
  onRetry: () => undefined,
  handledByCaller: () => false,
};

/** For callers that poll in a loop of their own (a head coming up, a join): the first failure is thrown. */
export const POLLING_CALLER: Partial<RetryOptions> = { budgetMs: 0 };

/** Thrown when the budget ran out: the last error, with how many tries and how long it took. */
export class RetriesExhausted extends Error {
  constructor(
    readonly what: string,
    readonly tries: number,
    readonly elapsedMs: number,
    readonly last: Error,
  ) {
    super(
      `${last.message} (${tries} tries over ${(elapsedMs / 1000).toFixed(1)} s, ${classifyExternalFailure(last).name})`,
      { cause: last },
    );
    this.name = 'RetriesExhausted';
  }
}

/**
 * Call `fn`; a transient failure (EXTERNAL_FAILURE_RULES) is tried again after a growing wait
 * (doubling from initialDelayMs up to maxDelayMs) until budgetMs has passed since the first one.
 * A permanent failure, or one the caller handles, is thrown at once, unchanged.
 */
export async function retryTransient<T>(
  what: string,
  fn: () => Promise<T>,
  options: Partial<RetryOptions> = {},
): Promise<T> {
  const o = { ...DEFAULT_RETRY, ...options };
  let firstFailureAt: number | undefined;
  let delay = o.initialDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await o.during(fn());
    } catch (err) {
      const rule = classifyExternalFailure(err);
      if (rule.verdict !== 'transient' || o.handledByCaller(err)) throw err;
      firstFailureAt ??= Date.now();
      const elapsed = Date.now() - firstFailureAt;
      if (elapsed + delay > o.budgetMs) throw new RetriesExhausted(what, attempt, elapsed, err as Error);
      o.onRetry({ what, rule, attempt, delayMs: delay, error: err as Error });
      await o.wait(delay);
      delay = Math.min(delay * 2, o.maxDelayMs);
    }
  }
}
