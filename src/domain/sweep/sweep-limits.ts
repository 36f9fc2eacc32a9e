import { z } from 'zod';

/** The most children a sweep may run at once after a change (a typo like 1000 should not start 1000 clusters). */
export const MAX_SWEEP_CONCURRENCY = 256;

/** What `sweep set` changes on a running sweep: its concurrency bound and/or its failure budget. */
export const SweepLimitsSchema = z
  .strictObject({
    concurrency: z.number().int().positive().max(MAX_SWEEP_CONCURRENCY).optional(),
    failureBudget: z.number().int().positive().optional(),
  })
  .refine((l) => l.concurrency !== undefined || l.failureBudget !== undefined, {
    message: 'nothing to change: give --concurrency N and/or --failure-budget K',
  });
export type SweepLimits = z.infer<typeof SweepLimitsSchema>;

/** One accepted change, as the sweep manifest records it. */
export const SweepLimitChangeSchema = z.strictObject({
  at: z.string(),
  concurrency: z.number(),
  failureBudget: z.number().optional(),
});
export type SweepLimitChange = z.infer<typeof SweepLimitChangeSchema>;

/**
 * Why a change cannot apply to a sweep in this state, or undefined when it can (pure; the
 * Update's validator). A budget at or below the failures so far would end the sweep at once.
 */
export function sweepLimitsRefusal(
  raw: unknown,
  state: { done: boolean; failed: number },
): string | undefined {
  if (state.done) return 'the sweep has finished starting children; there is nothing to change';
  const parsed = SweepLimitsSchema.safeParse(raw);
  if (!parsed.success) {
    return parsed.error.issues
      .map((i) => {
        const field = i.path.join('.');
        const hint =
          field === 'concurrency'
            ? ` (a whole number from 1 to ${MAX_SWEEP_CONCURRENCY})`
            : field === 'failureBudget'
              ? ' (a whole number of failed children, at least 1)'
              : '';
        return `${field ? `${field}: ` : ''}${i.message}${hint}`;
      })
      .join('; ');
  }
  const { failureBudget } = parsed.data;
  if (failureBudget !== undefined && failureBudget <= state.failed) {
    return `${state.failed} children have failed already; failureBudget ${failureBudget} would stop the sweep at once (give more than ${state.failed}, or cancel the sweep)`;
  }
  return undefined;
}

/** The limits a sweep runs under now (they change with `sweep set`). */
export interface LimitsInForce {
  concurrency: number;
  /** Absent: no limit on failed children. */
  failureBudget?: number;
}

/** The spec's limits, or the last change `sweep set` made (carried across continue-as-new). */
export function limitsInForce(
  spec: { concurrency: number; failureBudget?: number },
  changes: readonly SweepLimitChange[],
): LimitsInForce {
  const last = changes.at(-1);
  // A change records both limits as they were after it: its budget replaces the spec's, even absent.
  return last
    ? { concurrency: last.concurrency, failureBudget: last.failureBudget }
    : { concurrency: spec.concurrency, failureBudget: spec.failureBudget };
}

/** The limits after an accepted `sweep set`: what it names changes, the rest stays. */
export function changedLimits(current: LimitsInForce, asked: SweepLimits): LimitsInForce {
  return {
    concurrency: asked.concurrency ?? current.concurrency,
    failureBudget: asked.failureBudget ?? current.failureBudget,
  };
}

/** The failure budget is used up: no new child starts (running ones finish) and the sweep fails. */
export function failureBudgetExhausted(failed: number, failureBudget: number | undefined): boolean {
  return failureBudget !== undefined && failed >= failureBudget;
}
