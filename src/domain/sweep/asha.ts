import { z } from 'zod';
import type { Pruning } from '../run/experiment-input.js';

/**
 * Early stopping of a sweep's children from their in-loop validations (`val-env/...` on verl's
 * console line). `asha`: asynchronous successive halving (Li et al., "A System for Massively
 * Parallel Hyperparameter Tuning", 2020): rungs at gracePeriod x reductionFactor^k below maxSteps;
 * a child reaching a rung continues only if its value is in the top 1/reductionFactor of the
 * values recorded at that rung so far (itself included). `median`: the median stopping rule
 * (Golovin et al., "Google Vizier", 2017): from gracePeriod on, a child whose best value so far is
 * worse than the median of the other children's best values up to the same step is stopped.
 */
const ValEnvMetric = z
  .string()
  .regex(
    /^val-env\/[\w@.-]+\/[\w@.-]+$/,
    "an in-loop validation metric as verl prints it, such as 'val-env/CoordSokoban/success'",
  );

export const AshaSchema = z.strictObject({
  type: z.literal('asha'),
  metric: ValEnvMetric,
  mode: z.enum(['max', 'min']).default('max'),
  /** First rung (training steps): no child is stopped before it. */
  gracePeriod: z.number().int().positive(),
  /** Keep the top 1/reductionFactor at each rung; rungs are gracePeriod x reductionFactor^k. */
  reductionFactor: z
    .number()
    .int()
    .min(2, 'reductionFactor must be at least 2 (keep the top half or less)')
    .default(3),
  /** Highest step considered; default: the base spec's trainer.totalTrainingSteps. */
  maxSteps: z.number().int().positive().optional(),
  /**
   * Promotion (ASHA as published): a child stopped at a rung that later arrivals leave in the top
   * 1/reductionFactor continues from its last kept checkpoint when a slot is free, before a new
   * configuration starts. Off by default: stop-only, as Ray Tune's AsyncHyperBand.
   */
  promote: z.boolean().default(false),
});

export const MedianStoppingSchema = z.strictObject({
  type: z.literal('median'),
  metric: ValEnvMetric,
  mode: z.enum(['max', 'min']).default('max'),
  gracePeriod: z.number().int().positive(),
  /** Other children with a value at or before the step needed before anyone is stopped. */
  minChildren: z.number().int().min(1).default(3),
});

export const SchedulerSchema = z.discriminatedUnion('type', [AshaSchema, MedianStoppingSchema]);
export type Scheduler = z.infer<typeof SchedulerSchema>;
export type AshaScheduler = z.infer<typeof AshaSchema>;

/** Rung steps of an ASHA scheduler: gracePeriod x reductionFactor^k, each below maxSteps. */
export function ashaRungs(
  s: Pick<AshaScheduler, 'gracePeriod' | 'reductionFactor'>,
  maxSteps: number,
): number[] {
  const rungs: number[] = [];
  for (let r = s.gracePeriod; r < maxSteps; r *= s.reductionFactor) rungs.push(r);
  return rungs;
}

/** The rungs a scheduler judges at: below its maxSteps, by default the run's total steps. */
export const rungsOf = (s: AshaScheduler, totalSteps: number): number[] =>
  ashaRungs(s, s.maxSteps ?? totalSteps);

/**
 * What the scheduler has seen (plain JSON: it travels through continue-as-new). `rungs[step]`:
 * values recorded at that rung, in arrival order; `reports[index]`: each child's [step, value] pairs.
 */
export const SchedulerStateSchema = z.strictObject({
  rungs: z.record(z.string(), z.array(z.strictObject({ index: z.number(), value: z.number() }))),
  reports: z.record(z.string(), z.array(z.tuple([z.number(), z.number()]))),
  /** Promotions made: each child at most once per rung. */
  promoted: z.array(z.strictObject({ index: z.number(), rung: z.number() })).optional(),
});
export type SchedulerState = z.infer<typeof SchedulerStateSchema>;
export const emptySchedulerState = (): SchedulerState => ({ rungs: {}, reports: {} });

export interface StopDecision {
  stop: boolean;
  /** The rung step the decision was made at (asha), or the step (median). */
  rung?: number;
  reason?: string;
}

const better = (mode: 'max' | 'min', a: number, b: number) => (mode === 'max' ? a > b : a < b);

/**
 * One intermediate result arrives: child `index` validated at `step` with `value`. Records it in
 * `state` (mutated) and says whether the child must stop. Pure apart from that record; the same
 * reports in the same order always give the same decisions.
 */
export function onIntermediateResult(
  scheduler: Scheduler,
  state: SchedulerState,
  report: { index: number; step: number; value: number },
  totalSteps: number,
): StopDecision {
  const { index, step, value } = report;
  const mine = (state.reports[String(index)] ??= []);
  if (mine.some(([s]) => s === step)) return { stop: false }; // a repeated report changes nothing
  mine.push([step, value]);
  return scheduler.type === 'asha'
    ? ashaDecision(scheduler, state, report, totalSteps)
    : medianDecision(scheduler, state, report);
}

function ashaDecision(
  s: AshaScheduler,
  state: SchedulerState,
  { index, step, value }: { index: number; step: number; value: number },
  totalSteps: number,
): StopDecision {
  // The highest rung at or below this step that the child has not been judged at yet.
  const rung = rungsOf(s, totalSteps)
    .filter((r) => r <= step)
    .reverse()
    .find((r) => !(state.rungs[String(r)] ?? []).some((e) => e.index === index));
  if (rung === undefined) return { stop: false };
  const recorded = (state.rungs[String(rung)] ??= []);
  recorded.push({ index, value });
  const keep = Math.max(1, Math.floor(recorded.length / s.reductionFactor));
  const ahead = recorded.filter((e) => better(s.mode, e.value, value)).length;
  if (ahead < keep) return { stop: false, rung };
  return {
    stop: true,
    rung,
    reason: `asha rung ${rung}: ${s.metric}=${value} is not in the top ${keep} of ${recorded.length} (reductionFactor ${s.reductionFactor}, ${ahead} better)`,
  };
}

function medianDecision(
  s: z.infer<typeof MedianStoppingSchema>,
  state: SchedulerState,
  { index, step }: { index: number; step: number; value: number },
): StopDecision {
  if (step < s.gracePeriod) return { stop: false };
  const bestUpTo = (pairs: [number, number][]) =>
    pairs
      .filter(([at]) => at <= step)
      .map(([, v]) => v)
      .reduce<number | undefined>((b, v) => (b === undefined || better(s.mode, v, b) ? v : b), undefined);
  const mine = bestUpTo(state.reports[String(index)] ?? []) as number;
  const others = Object.entries(state.reports)
    .filter(([i]) => i !== String(index))
    .map(([, pairs]) => bestUpTo(pairs))
    .filter((v): v is number => v !== undefined)
    .sort((a, b) => a - b);
  if (others.length < s.minChildren) return { stop: false, rung: step };
  const mid = others.length / 2;
  const median =
    others.length % 2 === 1
      ? (others[Math.floor(mid)] as number)
      : ((others[mid - 1] as number) + (others[mid] as number)) / 2;
  if (!better(s.mode, median, mine)) return { stop: false, rung: step };
  return {
    stop: true,
    rung: step,
    reason: `median stopping at step ${step}: best ${s.metric}=${mine} is worse than the median ${median} of ${others.length} other children`,
  };
}

/**
 * ASHA promotion (pure): the first stopped child, by index, whose value at the rung it was stopped at
 * is now in the top max(1, floor(n / reductionFactor)) of that rung's n values (the same test as
 * `ashaDecision`, with the values that arrived since), and that was not promoted at that rung yet.
 */
export function promotableChild(
  scheduler: Scheduler,
  state: SchedulerState,
  stopped: readonly { index: number; rung: number }[],
): { index: number; rung: number } | undefined {
  if (scheduler.type !== 'asha' || !scheduler.promote) return undefined;
  const done = (c: { index: number; rung: number }) =>
    (state.promoted ?? []).some((p) => p.index === c.index && p.rung === c.rung);
  for (const c of [...stopped].sort((a, b) => a.index - b.index)) {
    const recorded = state.rungs[String(c.rung)] ?? [];
    const mine = recorded.find((e) => e.index === c.index);
    if (!mine || done(c)) continue;
    const keep = Math.max(1, Math.floor(recorded.length / scheduler.reductionFactor));
    const ahead = recorded.filter((e) => better(scheduler.mode, e.value, mine.value)).length;
    if (ahead < keep) return c;
  }
  return undefined;
}

/**
 * A running child's in-loop validation reaches the sweep's scheduler: it is recorded in `state`
 * (mutated, as onIntermediateResult does) and the answer is the stop to send, once per child, or
 * undefined to let the child run. `index` undefined: not a running child of this sweep; a report
 * without the scheduler's metric is ignored.
 */
export function schedulerStop(
  scheduler: Scheduler | undefined,
  state: SchedulerState,
  report: { index: number | undefined; step: number; metrics: Record<string, number> },
  totalSteps: number,
  stopSent: Readonly<Record<number, boolean>>,
): { index: number; stop: Pruning } | undefined {
  const { index, step } = report;
  const value = scheduler ? report.metrics[scheduler.metric] : undefined;
  if (!scheduler || index === undefined || value === undefined) return undefined;
  const d = onIntermediateResult(scheduler, state, { index, step, value }, totalSteps);
  if (!d.stop || stopSent[index]) return undefined;
  return { index, stop: { rung: d.rung ?? step, step, reason: d.reason ?? '' } };
}
