/**
 * Which child a sweep starts next (pure). The workflow waits for a free slot, then asks; these
 * functions see a snapshot of its counts and never wait themselves.
 */
import { type Scheduler, type SchedulerState, promotableChild } from './asha.js';
import type { ChildOutcome } from './sweep.js';
import { failureBudgetExhausted } from './sweep-limits.js';

/** A stopped child that ASHA would continue, and the rung it was stopped at. */
export interface Promotable {
  index: number;
  rung: number;
}

/** What the sweep knows when it decides. */
export interface SweepSlots {
  /** Index of the next configuration to start; `total` when every one has started. */
  next: number;
  total: number;
  running: number;
  concurrency: number;
  failed: number;
  failureBudget?: number;
  /** A stopped child ASHA would promote now, if any. */
  promotable?: Promotable;
}

export type SweepMove =
  | { do: 'wait' }
  | { do: 'stop' }
  | { do: 'continueAsNew' }
  | { do: 'promote'; child: Promotable }
  | { do: 'start'; index: number };

/** A free slot: fewer children run than the concurrency in force. */
export const slotFree = (s: Pick<SweepSlots, 'running' | 'concurrency'>): boolean =>
  s.running < s.concurrency;

/** Configurations are left to start and the failure budget allows starting them. */
export const configurationsLeft = (s: SweepSlots): boolean =>
  s.next < s.total && !failureBudgetExhausted(s.failed, s.failureBudget);

/**
 * While configurations are left, once a slot is free: stop when the budget ran out meanwhile;
 * continue as new when the history is full; a promotion before a new configuration; else the next.
 */
export function nextWhileStarting(
  s: SweepSlots & {
    /** The history is long (or the server suggests it): hand over to a new run. */
    historyFull: boolean;
  },
): SweepMove {
  if (!slotFree(s)) return { do: 'wait' };
  if (failureBudgetExhausted(s.failed, s.failureBudget)) return { do: 'stop' };
  if (s.historyFull) return { do: 'continueAsNew' };
  if (s.promotable) return { do: 'promote', child: s.promotable };
  return { do: 'start', index: s.next };
}

/** Every configuration has started: promotions take the slots that free up, until none is running. */
export function nextWhilePromoting(s: SweepSlots): SweepMove {
  if (slotFree(s) && s.promotable) return { do: 'promote', child: s.promotable };
  if (s.running === 0) return { do: 'stop' };
  return { do: 'wait' };
}

/** The stopped children ASHA may promote: each with the rung it was stopped at. */
export function stoppedChildren(results: readonly ChildOutcome[]): Promotable[] {
  return results.flatMap((r) =>
    r.outcome === 'pruned' && r.pruned ? [{ index: r.index, rung: r.pruned.rung }] : [],
  );
}

/** ASHA with `promote: true` only: the child to promote now, if any (see promotableChild). */
export function promotionCandidate(
  scheduler: Scheduler | undefined,
  state: SchedulerState,
  results: readonly ChildOutcome[],
): Promotable | undefined {
  return scheduler && promotes(scheduler)
    ? promotableChild(scheduler, state, stoppedChildren(results))
    : undefined;
}

/** Promotion is on: the sweep looks for promotable children until none can run. */
export const promotes = (scheduler: Scheduler | undefined): boolean =>
  scheduler?.type === 'asha' && scheduler.promote;
