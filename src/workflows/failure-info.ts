import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';

/** The ApplicationFailure type behind an activity failure, if any. */
export function failureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

export function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(err);
}

export function outcomeOf(err: unknown): 'cancelled' | 'failed' {
  return isCancellation(err) ? 'cancelled' : 'failed';
}
