import { type SchedulerState, emptySchedulerState } from '../domain/sweep/asha.js';
import { workerGpus } from '../domain/spec/experiment.js';
import type { TrackingOutcome } from '../domain/tracking/tracking.js';
import {
  type ChildOutcome,
  type ParamSet,
  type SweepCarry,
  type SweepInputSchema,
  type SweepManifest,
  type SweepResult,
  type SweepRow,
  type SweepStatus,
} from '../domain/sweep/sweep.js';
import type { SweepEnding } from '../domain/sweep/sweep-ending.js';
import { expandSweep } from '../domain/sweep/sweep-expand.js';
import {
  type LimitsInForce,
  type SweepLimitChange,
  failureBudgetExhausted,
  limitsInForce,
} from '../domain/sweep/sweep-limits.js';
import { type SweepSlots, promotionCandidate } from '../domain/sweep/sweep-next.js';
import { bestChild, countOutcomes, rankChildren, sweepGpuUsage } from '../domain/sweep/sweep-results.js';
import type { z } from 'zod';
import { type RunIds, runIds } from './run-ids.js';

/** The sweep's input after its schema's defaults. */
export type ParsedSweepInput = z.output<typeof SweepInputSchema>;

/**
 * Everything a sweep knows: what continue-as-new carries (results, next index, runs, limit
 * changes, the scheduler's state), what runs now, and how it ends. The workflow's steps fill it
 * in; the pure functions below read it, so they are tested without a server.
 */
export interface SweepRun {
  input: ParsedSweepInput;
  ids: RunIds;
  /** Every configuration, by index (grid x seeded random; search tpe: those asked so far). */
  paramSets: ParamSet[];
  total: number;
  /** Rows of the children that ended (a promoted child's row replaces the stopped one's). */
  results: ChildOutcome[];
  /** Runs of the workflow so far, this one included. */
  runs: number;
  /** Index of the next configuration to start. */
  next: number;
  running: number;
  maxRunning: number;
  /** Limits in force: the spec's, or the last change `sweep set` made. */
  limits: LimitsInForce;
  limitChanges: SweepLimitChange[];
  /** Every configuration has started (or the budget stopped starting): `sweep set` is refused. */
  startingDone: boolean;
  /** What the early-stopping scheduler has seen (rungs, reports, promotions). */
  scheduler: SchedulerState;
  /** Running children by workflow id: their in-loop validations reach the scheduler. */
  indexOfRunning: Record<string, number>;
  /** Children asked to stop already (the scheduler asks once). */
  stopSent: Record<number, boolean>;
  /** Set when the sweep was cancelled: rethrown once the manifest is written. */
  cancellation?: unknown;
  /** The sweep's parent run in the experiment tracker (absent without `tracking` in the base spec). */
  tracking?: TrackingOutcome;
}

export function newSweepRun(input: ParsedSweepInput, info: RunIds): SweepRun {
  const { carry } = input;
  // search tpe: the parameters are asked child by child; the ones answered so far are carried.
  const { search } = input.sweep;
  const paramSets = search ? [...(carry?.searched ?? [])] : expandSweep(input.sweep);
  const limitChanges = [...(carry?.limitChanges ?? [])];
  return {
    input,
    ids: runIds(info),
    paramSets,
    total: search ? search.trials : paramSets.length,
    results: [...(carry?.results ?? [])],
    runs: carry?.runs ?? 1,
    next: carry?.nextIndex ?? 0,
    running: 0,
    maxRunning: carry?.maxRunning ?? 0,
    limits: limitsInForce(input.sweep, limitChanges),
    limitChanges,
    startingDone: false,
    scheduler: carry?.scheduler ?? emptySchedulerState(),
    indexOfRunning: {},
    stopSent: {},
  };
}

export const failedChildren = (run: SweepRun): number => countOutcomes(run.results).failed;

/** The failure budget in force is used up: no new child starts. */
export const budgetExhausted = (run: SweepRun): boolean =>
  failureBudgetExhausted(failedChildren(run), run.limits.failureBudget);

/** What the sweep's decisions see now (see src/domain/sweep/sweep-next.ts). */
export function slotsOf(run: SweepRun): SweepSlots {
  return {
    next: run.next,
    total: run.total,
    running: run.running,
    concurrency: run.limits.concurrency,
    failed: failedChildren(run),
    failureBudget: run.limits.failureBudget,
    promotable: promotionCandidate(run.input.sweep.scheduler, run.scheduler, run.results),
  };
}

/** What the sweepStatus and status queries (and the setLimits Update) answer. */
export function sweepStatusOf(run: SweepRun): SweepStatus {
  const { sweep: spec } = run.input;
  return {
    total: run.total,
    started: run.next,
    running: run.running,
    ...countOutcomes(run.results),
    stoppedByFailureBudget: budgetExhausted(run),
    runs: run.runs,
    best: bestChild(run.results, spec.objective),
    concurrency: run.limits.concurrency,
    failureBudget: run.limits.failureBudget,
  };
}

/** What continue-as-new hands to the next run (children drained first). */
export function sweepCarry(run: SweepRun): SweepCarry {
  return {
    nextIndex: run.next,
    results: run.results,
    runs: run.runs + 1,
    maxRunning: run.maxRunning,
    ...(run.limitChanges.length > 0 ? { limitChanges: run.limitChanges } : {}),
    ...(run.input.sweep.scheduler ? { scheduler: run.scheduler } : {}),
    ...(run.input.sweep.search ? { searched: run.paramSets } : {}),
  };
}

/** The children ranked by the objective, with their parameters. */
export const rankedChildren = (run: SweepRun): SweepRow[] =>
  rankChildren(run.results, (i) => run.paramSets[i] ?? {}, run.input.sweep.objective);

/** The archived sweep manifest (sweep.json), written once. */
export function buildSweepManifest(run: SweepRun, ending: SweepEnding, writtenAt: string): SweepManifest {
  const { sweep: spec, provenance } = run.input;
  return {
    schemaVersion: 1,
    sweep: spec.name,
    temporal: { ...run.ids },
    provenance,
    spec,
    objective: spec.objective,
    counts: { total: run.total, ...countOutcomes(run.results), notStarted: notStarted(run) },
    stoppedByFailureBudget: ending.stoppedByFailureBudget,
    outcome: ending.outcome,
    children: rankedChildren(run),
    ...(run.limitChanges.length > 0 ? { limitChanges: run.limitChanges } : {}),
    gpuUsage: sweepGpuUsage(run.results, workerGpus(spec.base), spec.base.cost),
    writtenAt,
  };
}

export const notStarted = (run: SweepRun): number => run.total - run.results.length;

/** The workflow's result (also the details of its failure). */
export function sweepResult(
  run: SweepRun,
  ending: SweepEnding,
  archived: { manifestPath?: string; csvPath?: string },
): SweepResult {
  return {
    sweepId: run.ids.workflowId,
    total: run.total,
    ...countOutcomes(run.results),
    notStarted: notStarted(run),
    stoppedByFailureBudget: ending.stoppedByFailureBudget,
    runs: run.runs,
    maxRunning: run.maxRunning,
    ranked: rankedChildren(run),
    manifestPath: archived.manifestPath,
    csvPath: archived.csvPath,
    ...(run.tracking ? { tracking: run.tracking } : {}),
  };
}
