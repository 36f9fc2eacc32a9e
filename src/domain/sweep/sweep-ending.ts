/** How a sweep ends, decided from its counts (pure: the workflow, its tests and the table tests share it). */
import type { NotifyEvent } from '../tracking/tracking.js';
import type { SweepManifest } from './sweep.js';
import { failureBudgetExhausted } from './sweep-limits.js';

export interface SweepTally {
  /** The sweep itself was cancelled (its children were asked to cancel too). */
  cancelled: boolean;
  total: number;
  succeeded: number;
  failed: number;
  /** Configurations that never got a child. */
  notStarted: number;
  /** The budget in force at the end: the spec's, or the last `sweep set` changed it to. */
  failureBudget?: number;
}

export interface SweepEnding {
  outcome: SweepManifest['outcome'];
  stoppedByFailureBudget: boolean;
  /** What the notification targets are told. */
  event: NotifyEvent;
  reason: string;
  /** The sweep fails with this message (a schedule with pauseOnFailure then pauses); absent otherwise. */
  failure?: string;
}

/**
 * Reaching the budget fails the sweep unless it was cancelled; either way the notification says
 * the budget ran out. Messages name the budget in force (a `sweep set` may have changed the spec's).
 */
export function sweepEnding(t: SweepTally): SweepEnding {
  const stoppedByFailureBudget = failureBudgetExhausted(t.failed, t.failureBudget);
  const outcome = t.cancelled ? 'cancelled' : stoppedByFailureBudget ? 'failed' : 'succeeded';
  if (!stoppedByFailureBudget)
    return {
      outcome,
      stoppedByFailureBudget,
      event: outcome,
      reason: `${t.succeeded} of ${t.total} children succeeded`,
    };
  const reason = `${t.failed} children failed (failureBudget ${t.failureBudget})`;
  return {
    outcome,
    stoppedByFailureBudget,
    event: 'failureBudgetExhausted',
    reason,
    ...(t.cancelled ? {} : { failure: `${reason}; ${t.notStarted} of ${t.total} were not started` }),
  };
}
