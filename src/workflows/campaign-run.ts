import type {
  AttemptEnd,
  AttemptRecord,
  CampaignInput,
  CampaignManifestDraft,
  CampaignProgress,
  CampaignResult,
  CampaignState,
  LatestCheckpoint,
} from '../domain/campaign/campaign.js';
import { endsCampaign, isPreemption } from '../domain/failures/catalogue.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import type { ExperimentInput, ExperimentResult } from '../domain/run/experiment-input.js';
import { workerGpus } from '../domain/spec/experiment.js';
import type { TrackingOutcome } from '../domain/tracking/tracking.js';
import { sumGpuUsage } from '../domain/usage/gpu-usage.js';
import { ledgerPath, manifestPath, runCheckpointDir } from '../domain/spec/paths.js';
import { secondsBetween } from './clock.js';
import type { ChangingAttributes } from './visibility.js';
import { type RunIds, runIds } from './run-ids.js';

/**
 * Everything a campaign knows: `state` (carried across continue-as-new), what the queries show
 * live, the checkpoints last found, and how it ends. The workflow's steps fill it in; the pure
 * functions below read it.
 */
export interface CampaignRun {
  input: CampaignInput;
  ids: RunIds;
  /** Shared by every attempt: `<checkpointDir>/<name>/<campaign id>`. */
  checkpointDir: string;
  ledgerPath: string;
  /** GPUs of the cluster shape, for GPU-seconds. */
  gpus: number;
  state: CampaignState;
  live: {
    phase: CampaignProgress['phase'];
    step: number;
    lastCheckpointStep: number;
    attemptStartedAt: string;
  };
  checkpoints: LatestCheckpoint;
  /** Attempts started in this run (not carried): a run makes progress before it continues as new. */
  attemptsThisRun: number;
  outcome: CampaignResult['outcome'];
  reason?: string;
  failure?: unknown;
  manifestPath?: string;
  /** The campaign's parent run in the experiment tracker (absent without `tracking` in the spec). */
  tracking?: TrackingOutcome;
  /** Search attributes that change (set by the workflow; absent in pure tests). */
  visible?: ChangingAttributes;
}

export function newCampaignRun(input: CampaignInput, info: RunIds): CampaignRun {
  const { spec } = input;
  const ids = runIds(info);
  const state: CampaignState = input.state ?? {
    attempts: [],
    totalTrainingSteps: spec.trainer.totalTrainingSteps,
    paused: false,
    attemptsWithoutNewCheckpoint: 0,
    latestCheckpointStep: 0,
    continuedAsNew: 0,
    historyEventsPerRun: [],
  };
  return {
    input,
    ids,
    checkpointDir: runCheckpointDir(spec.storage, spec.name, ids.workflowId),
    ledgerPath: ledgerPath(spec.storage.archiveDir, spec.name, ids.workflowId),
    gpus: workerGpus(spec),
    state,
    live: {
      phase: 'checking',
      step: state.latestCheckpointStep,
      lastCheckpointStep: state.latestCheckpointStep,
      attemptStartedAt: '',
    },
    checkpoints: { checkpoints: [], untrusted: [] },
    attemptsThisRun: 0,
    outcome: 'failed',
  };
}

/**
 * The next attempt's input: the campaign's spec with its step budget (raised by `extend`), in the
 * shared checkpoint dir, resuming from `latest` when there is one.
 */
export function attemptInput(run: CampaignRun, latest: { path: string } | undefined): ExperimentInput {
  const { spec, provenance } = run.input;
  return {
    spec: { ...spec, trainer: { ...spec.trainer, totalTrainingSteps: run.state.totalTrainingSteps } },
    provenance,
    resumeFrom: latest?.path,
    checkpointDir: run.checkpointDir,
    ledgerPath: run.ledgerPath,
  };
}

const usedGpuSeconds = (run: CampaignRun) => run.state.attempts.reduce((s, a) => s + a.gpuSeconds, 0);

/** What the progress and status queries answer at `now` (the running attempt's GPU time included). */
export function progressOf(run: CampaignRun, now: string): CampaignProgress {
  const { live, state } = run;
  const running = live.phase === 'running';
  return {
    phase: live.phase,
    attempt: state.attempts.length + (running ? 1 : 0),
    step: live.step,
    lastCheckpointStep: live.lastCheckpointStep,
    totalTrainingSteps: state.totalTrainingSteps,
    gpuSeconds:
      usedGpuSeconds(run) +
      (running && live.attemptStartedAt ? run.gpus * secondsBetween(live.attemptStartedAt, now) : 0),
    paused: state.paused,
    continuedAsNew: state.continuedAsNew,
  };
}

/** The last attempt trained to the (current) total: the campaign is done. */
export function finishedTraining(run: CampaignRun): boolean {
  const last = run.state.attempts.at(-1);
  return last?.outcome === 'succeeded' && (last.finalStep ?? 0) >= run.state.totalTrainingSteps;
}

/** The last attempt stopped early (RAGEN's rules would fire again on a resume): the reason, else undefined. */
export function earlyStopReason(run: CampaignRun): string | undefined {
  const last = run.state.attempts.at(-1);
  return last?.outcome === 'earlyStopped'
    ? `attempt ${last.attempt} stopped early: ${last.ended.message}`
    : undefined;
}

/**
 * Why no further attempt may start (a budget is used up, or the last failure is one no attempt can
 * fix: the catalogue's `fatal`); undefined if one may.
 */
export function budgetFailure(run: CampaignRun): { type: string; reason: string } | undefined {
  const { state } = run;
  const { budgets } = run.input;
  const last = state.attempts.at(-1);
  // A pause ends an attempt on purpose, a preemption is the queue's doing: neither uses up the budget.
  const counted = state.attempts.filter((a) => a.outcome !== 'paused' && a.outcome !== 'preempted');
  if (counted.length >= budgets.maxAttempts) {
    return {
      type: ErrorTypes.CampaignAttemptsExhausted,
      reason: `campaign.maxAttempts=${budgets.maxAttempts} attempts used; the last ended with ${last?.ended.type}: ${last?.ended.message}`,
    };
  }
  if (state.attemptsWithoutNewCheckpoint >= budgets.maxAttemptsWithoutNewCheckpoint) {
    return {
      type: ErrorTypes.CampaignStalled,
      reason: `${state.attemptsWithoutNewCheckpoint} attempts in a row ended without a new checkpoint (campaign.maxAttemptsWithoutNewCheckpoint=${budgets.maxAttemptsWithoutNewCheckpoint}); the last ended with ${last?.ended.type}: ${last?.ended.message}`,
    };
  }
  if (last && endsCampaign(last.ended.type)) {
    return {
      type: last.ended.type,
      reason: `attempt ${last.attempt} failed with ${last.ended.type}, which another attempt cannot fix: ${last.ended.message}`,
    };
  }
  return undefined;
}

/** How one attempt (a child experiment) ended, as the child reported it. */
export interface AttemptEnding {
  result?: ExperimentResult;
  outcome: AttemptRecord['outcome'];
  ended: AttemptEnd;
}

/**
 * How an attempt that ended in a failure counts: a cancellation, a preemption (the catalogue's
 * `preempted`, once the patch asked for by `preemptionPatched` is in; asked only for such a type, so
 * histories keep their markers), else a failure.
 */
export function failedAttemptOutcome(
  f: { type?: string; cancelled: boolean },
  preemptionPatched: () => boolean,
): 'cancelled' | 'preempted' | 'failed' {
  if (f.cancelled) return 'cancelled';
  return isPreemption(f.type) && preemptionPatched() ? 'preempted' : 'failed';
}

/** Attempts in a row without a new checkpoint: a failed one that left none adds one, any other ending starts again at 0. */
export function stallCountAfter(
  previous: number,
  outcome: AttemptRecord['outcome'],
  progressed: boolean,
): number {
  return outcome === 'failed' && !progressed ? previous + 1 : 0;
}

/** The lineage record of one attempt. */
export function attemptRecord(
  run: CampaignRun,
  a: {
    n: number;
    workflowId: string;
    startedFrom?: string;
    startedFromStep: number;
    totalTrainingSteps: number;
    startedAt: string;
    endedAt: string;
    checkpointStepAfter: number;
  },
  ending: AttemptEnding,
): AttemptRecord {
  const { result } = ending;
  const { spec } = run.input;
  const trainSeconds = (result?.stages ?? [])
    .filter((s) => s.stage === 'train')
    .reduce((sum, s) => sum + secondsBetween(s.startedAt, s.endedAt ?? a.endedAt), 0);
  return {
    attempt: a.n,
    workflowId: a.workflowId,
    startedFrom: a.startedFrom,
    startedFromStep: a.startedFromStep,
    previousEnded: run.state.attempts.at(-1)?.ended,
    totalTrainingSteps: a.totalTrainingSteps,
    outcome: ending.outcome,
    ended: ending.ended,
    finalStep: result?.training.finalStep,
    checkpointStepAfter: a.checkpointStepAfter,
    manifestPath:
      result?.archive.manifestPath ?? manifestPath(spec.storage.archiveDir, spec.name, a.workflowId),
    submits: result?.submits,
    gpuSeconds: result ? run.gpus * trainSeconds : run.gpus * secondsBetween(a.startedAt, a.endedAt),
    gpuUsage: result?.gpuUsage,
    stages: result?.stages,
    startedAt: a.startedAt,
    endedAt: a.endedAt,
  };
}

/** The campaign manifest as the workflow knows it; the archive activity adds hashes and writes it. */
export function buildCampaignManifestDraft(run: CampaignRun, writtenAt: string): CampaignManifestDraft {
  const { spec, budgets, provenance } = run.input;
  return {
    campaign: run.ids.workflowId,
    experiment: spec.name,
    temporal: { ...run.ids },
    budgets,
    provenance,
    checkpointDir: run.checkpointDir,
    totalTrainingSteps: run.state.totalTrainingSteps,
    outcome: run.outcome,
    reason: run.reason,
    attempts: run.state.attempts,
    gpuSeconds: usedGpuSeconds(run),
    gpuUsage: sumGpuUsage(
      run.state.attempts.map((a) => a.gpuUsage),
      spec.cost,
    ),
    continuedAsNew: run.state.continuedAsNew,
    writtenAt,
    ledgerPath: run.ledgerPath,
  };
}

export function campaignResult(run: CampaignRun): CampaignResult {
  return {
    outcome: run.outcome,
    reason: run.reason,
    attempts: run.state.attempts,
    finalStep: run.state.attempts.at(-1)?.finalStep,
    latestCheckpointStep: run.state.latestCheckpointStep,
    gpuSeconds: usedGpuSeconds(run),
    manifestPath: run.manifestPath,
    historyEventsPerRun: run.state.historyEventsPerRun,
    ...(run.tracking ? { tracking: run.tracking } : {}),
  };
}
