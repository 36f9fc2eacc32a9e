/** One sweep child: what it is started with, and the compact row its ending becomes (pure). */
import { type Scheduler, type SchedulerState, rungsOf } from './asha.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import type { ExperimentInput, ExperimentResult } from '../run/experiment-input.js';
import type { GpuUsage } from '../usage/gpu-usage.js';
import type { ChildOutcome, ParamSet } from './sweep.js';

/** A promoted child: a new workflow that resumes the stopped one's last kept checkpoint. */
export interface Promotion {
  rung: number;
  /** The stopped child's row; the promoted one's replaces it. */
  prior: ChildOutcome;
  resume: Pick<ExperimentInput, 'resumeFrom' | 'checkpointDir' | 'ledgerPath'>;
  fromStep: number;
}

/** A promoted run is a workflow of its own: the first run's id and the rung. */
export const promotedWorkflowId = (firstId: string, rung: number): string => `${firstId}-p${rung}`;

/**
 * The child's input. With a scheduler the child reports its in-loop validations; ASHA judges only
 * at its rungs (those the child reaches), so the child reports just those.
 */
export function childExperimentInput(a: {
  spec: ExperimentSpec;
  provenance: ExperimentInput['provenance'];
  scheduler: Scheduler | undefined;
  /** The base spec's total steps: the rungs are the sweep's, whatever a child overrides. */
  baseTotalSteps: number;
  resume?: Promotion['resume'];
}): ExperimentInput {
  const { scheduler } = a;
  const reportSteps =
    scheduler?.type === 'asha'
      ? {
          reportSteps: rungsOf(scheduler, a.baseTotalSteps).filter(
            (r) => r <= a.spec.trainer.totalTrainingSteps,
          ),
        }
      : {};
  return {
    spec: a.spec,
    provenance: a.provenance,
    ...(scheduler ? { reportValidations: true, ...reportSteps } : {}),
    ...a.resume,
  };
}

/** The Temporal UI's summary of a sweep child: the sweep, its index and the swept parameters. */
export function childSummary(
  name: string,
  index: number,
  total: number,
  params: ParamSet,
  promotion?: Pick<Promotion, 'rung' | 'fromStep'>,
): string {
  const swept = Object.entries(params)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  const promoted = promotion ? ` (promoted at rung ${promotion.rung}, from step ${promotion.fromStep})` : '';
  return `${name} child ${index + 1}/${total}: ${swept || '(base spec)'}${promoted}`;
}

/** Errors are kept to one line per child: the child's own manifest has the rest. */
export const shortError = (text: string): string => text.split('\n')[0]?.slice(0, 300) ?? '';

/** A child's GPU-seconds, kept as two numbers (results travel through continue-as-new). */
const gpuFields = (u: GpuUsage | undefined) =>
  u ? { gpuSeconds: u.allocatedSeconds, busyGpuSeconds: u.busySeconds } : {};

/** The scheduler's last [step, value] of a child, for its row. */
export function lastIntermediateOf(
  state: SchedulerState,
  index: number,
): Pick<ChildOutcome, 'lastIntermediate'> {
  const last = state.reports[String(index)]?.at(-1);
  return last ? { lastIntermediate: last } : {};
}

/** A configuration the base spec refuses (validated at load time; a spec changed under a schedule). */
export function refusedChild(
  index: number,
  workflowId: string,
  issues: readonly { field: string; message: string }[],
): ChildOutcome {
  return {
    index,
    workflowId,
    outcome: 'failed',
    error: issues.map((i) => `${i.field}: ${i.message}`).join('; '),
  };
}

/** A child that returned. One paused by hand (the campaign signal) stopped before validation: cancelled. */
export function endedChild(
  index: number,
  workflowId: string,
  r: ExperimentResult,
  intermediate: Pick<ChildOutcome, 'lastIntermediate'>,
): ChildOutcome {
  const paused = r.outcome === 'paused';
  const outcome: ChildOutcome['outcome'] = r.outcome === 'paused' ? 'cancelled' : r.outcome;
  return {
    index,
    workflowId,
    outcome,
    successRate: r.validation.successRate,
    manifestPath: r.archive.manifestPath,
    error: paused ? 'paused by hand before validation' : undefined,
    ...gpuFields(r.gpuUsage),
    ...intermediate,
    ...(r.pruned ? { pruned: { rung: r.pruned.rung, reason: r.pruned.reason } } : {}),
  };
}

/** A child that failed or was cancelled; its experiment result, if it got that far, came in the details. */
export function failedChild(
  index: number,
  workflowId: string,
  failure: { cancelled: boolean; message: string; result?: ExperimentResult },
  intermediate: Pick<ChildOutcome, 'lastIntermediate'>,
): ChildOutcome {
  const r = failure.result;
  return {
    index,
    workflowId,
    outcome: failure.cancelled ? 'cancelled' : 'failed',
    successRate: r?.validation.successRate,
    manifestPath: r?.archive.manifestPath,
    error: shortError(failure.message),
    ...gpuFields(r?.gpuUsage),
    ...intermediate,
  };
}

/** A promoted child's row replaces the stopped one's: GPU-seconds of both, the promotions listed. */
export function withPromotion(
  row: ChildOutcome,
  promotion: Pick<Promotion, 'prior' | 'rung' | 'fromStep'>,
): ChildOutcome {
  const { prior } = promotion;
  const add = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : a + b);
  return {
    ...row,
    gpuSeconds: add(prior.gpuSeconds, row.gpuSeconds),
    busyGpuSeconds: add(prior.busyGpuSeconds, row.busyGpuSeconds),
    promotions: [
      ...(prior.promotions ?? []),
      { rung: promotion.rung, fromStep: promotion.fromStep, workflowId: row.workflowId },
    ],
  };
}
