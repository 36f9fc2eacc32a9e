import { ApplicationFailure } from '@temporalio/common';
import { DomainError } from '../../errors/domain-error.js';

/** Kept here for activities (and callers elsewhere) that raise permanent failures: a DomainError. */
export { permanent } from '../../errors/domain-error.js';

/**
 * The one place where domain errors become Temporal failures. Non-retryable is said by the throw
 * site alone (`permanent` vs `transient`, each taking the types the failure catalogue's `retry`
 * gives it), not by the retry policies' nonRetryableErrorTypes: the code that sees the cause knows
 * whether retrying helps (a Kubernetes 403 never does, a 503 does, from the same call), and the
 * cleanup profile, which has no type list, then treats a permanent error exactly like the others
 * do. Anything else (an ApplicationFailure, a cancellation, a plain Error) passes unchanged;
 * Temporal retries plain errors.
 */
export function toTemporalFailure(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  const failure = ApplicationFailure.create({
    type: err.type,
    message: err.message,
    nonRetryable: err.permanent,
    details: err.details === undefined ? undefined : [err.details],
    cause: err.cause instanceof Error ? err.cause : undefined,
  });
  failure.stack = err.stack; // where it was thrown, not where it was mapped
  return failure;
}

type AsyncFn = (...args: never[]) => Promise<unknown>;

/** Every activity of `activities`, its failures mapped by toTemporalFailure (same names, same types). */
export function mapFailuresAtBoundary<T extends Record<string, AsyncFn>>(activities: T): T {
  const mapped = Object.entries(activities).map(([name, fn]) => [
    name,
    async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw toTemporalFailure(err);
      }
    },
  ]);
  return Object.fromEntries(mapped) as T;
}
