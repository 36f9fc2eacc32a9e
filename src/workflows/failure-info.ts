import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  isCancellation,
} from '@temporalio/workflow';

/** What a workflow needs to know about a failure, whatever wrapped it. */
export interface UnwrappedFailure {
  /** The ApplicationFailure's type (an ErrorTypes name, RegistryUnavailable, …), if it has one. */
  type?: string;
  message: string;
  /** The ApplicationFailure's details (a failed child's result travels as details[0]). */
  details: unknown[];
  cancelled: boolean;
}

/**
 * The one place that looks through the wrappers Temporal puts around a failure: an activity's
 * (ActivityFailure) and a child workflow's (ChildWorkflowFailure) carry the real one as `cause`.
 */
export function unwrapFailure(err: unknown): UnwrappedFailure {
  const cause =
    (err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) && err.cause ? err.cause : err;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  return {
    type: app?.type ?? undefined,
    message: cause instanceof Error ? cause.message : String(err),
    details: app?.details ?? [],
    cancelled: isCancellation(err),
  };
}

export function outcomeOf(err: unknown): 'cancelled' | 'failed' {
  return isCancellation(err) ? 'cancelled' : 'failed';
}
