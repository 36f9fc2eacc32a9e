import { formatGb } from '../checkpoints/checkpoint-space.js';
import type { ClusterStatus } from '../cluster/cluster.js';
import { type ErrorType, ErrorTypes } from '../failures/error-types.js';
import { classifyJobFailure } from '../failures/job-exit.js';
import { logTail } from './log-tail.js';
import type { TrainHeartbeat } from '../run/progress.js';

/**
 * What one poll of the train activity means: the rules of src/activities/train/train.ts, pure. The
 * activity gathers a poll's observations (the job, the parsed driver log, the checkpoint tracker,
 * the cluster), asks trainProgress how the heartbeat moves and judgeTrainPoll what to do, and then
 * does it (stop the job, fail, return, or wait for the next poll).
 */

/** The run as the verdicts read it: fixed for the activity's life. */
export interface TrainRun {
  submissionId: string;
  clusterName: string;
  checkpointDir: string;
  totalTrainingSteps: number;
  /** Step of the checkpoint resumed from (0 for a fresh run): its validation line is no training step. */
  startStep: number;
  /** Worker nodes the cluster was made with: fewer alive means one was lost. */
  wantWorkers: number;
  deadlines: { noProgressSeconds: number; firstStepSeconds: number };
}

/** The driver log so far, as src/activities/train/train-log.ts parses it. */
export interface TrainLogSeen {
  lastStep: number;
  /** The `early_stopped/*` metrics RAGEN logged as fired. */
  earlyStopped: readonly string[];
  /** What classifyJobFailure reads: the failure evidence, then the last lines. */
  failureText: string;
  /** The last lines, quoted in a failed or stopped job's message. */
  tail: readonly string[];
}

export type ClusterSeen = Pick<ClusterStatus, 'phase' | 'workersAlive' | 'message'>;

/** The job as the Ray head reports it; each status carries what its verdict reads. */
export type TrainJobSeen =
  | { status: 'SUCCEEDED' }
  | {
      status: 'FAILED';
      driverExitCode?: number;
      message: string;
      /** Free bytes on the checkpoint volume now: a full disk's message names them. */
      checkpointFreeBytes: number | undefined;
    }
  | { status: 'STOPPED'; message: string }
  // Only a running job needs the cluster: the backend is not asked once the job has ended.
  | { status: 'PENDING' | 'RUNNING'; cluster: ClusterSeen };

export interface TrainPoll {
  job: TrainJobSeen;
  log: TrainLogSeen;
  /** The tracker's checkpoint step (the heartbeat's when the tracker has none). */
  checkpoint: number;
  /** The heartbeat with this poll's progress in it (trainProgress). */
  beat: TrainHeartbeat;
  /** ms since epoch. */
  now: number;
}

/** A permanent failure of the activity: its error type, message and details. */
export interface TrainFailure {
  kind: 'failed';
  type: ErrorType;
  message: string;
  /** The job may still run: stop it before failing. */
  stopJob: boolean;
  /** The heartbeat (step, last checkpoint) as the failure's details, where the failure has them. */
  details?: TrainHeartbeat;
}

export type TrainVerdict =
  /** The job runs: poll again, quickly once the last step is seen (it only saves and exits then). */
  | { kind: 'continue'; lastStepSeen: boolean }
  | { kind: 'finished'; finalStep: number; lastCheckpointStep: number }
  /** RAGEN stopped on its own (exit 0 with `early_stopped/<reason>` metrics). */
  | { kind: 'earlyStopped'; finalStep: number; lastCheckpointStep: number; reasons: string[] }
  | TrainFailure;

export interface TrainProgress {
  beat: TrainHeartbeat;
  /** A new step or checkpoint: the no-progress watchdog starts over. */
  progressed: boolean;
  newCheckpoint: boolean;
}

/** Whether a training step was logged: the resumed checkpoint's validation line (step:N) is not one. */
export function hasTrained(beat: Pick<TrainHeartbeat, 'step'>, startStep: number): boolean {
  return beat.step > startStep;
}

/** The heartbeat after a poll that saw the log at `lastStep` and the tracker at `checkpoint`. */
export function trainProgress(
  beat: TrainHeartbeat,
  seen: { lastStep: number; checkpoint: number; now: number },
): TrainProgress {
  const newCheckpoint = seen.checkpoint > beat.lastCheckpointStep;
  if (seen.lastStep <= beat.step && !newCheckpoint) return { beat, progressed: false, newCheckpoint };
  return {
    beat: {
      ...beat,
      step: Math.max(beat.step, seen.lastStep),
      lastCheckpointStep: seen.checkpoint,
      lastProgressAt: seen.now,
    },
    progressed: true,
    newCheckpoint,
  };
}

/**
 * The Ray head did not answer. A cluster that is gone or failed will not come back: ClusterLost.
 * Otherwise undefined: the head's error stands and the activity's retry policy decides.
 */
export function judgeSilentHead(
  run: TrainRun,
  cluster: ClusterSeen,
  beat: TrainHeartbeat,
): TrainFailure | undefined {
  // Kueue suspended the cluster and the operator deleted the head: a preemption, not a silent head.
  if (cluster.phase === 'queued') return preempted(run, cluster, beat);
  if (cluster.phase !== 'gone' && cluster.phase !== 'failed') return undefined;
  return {
    kind: 'failed',
    type: ErrorTypes.ClusterLost,
    message: `cluster ${run.clusterName} is ${cluster.phase} during training (at step ${beat.step}, last checkpoint ${beat.lastCheckpointStep}): ${cluster.message ?? ''}`,
    stopJob: false,
    details: beat,
  };
}

/** The head answered but knows no job of ours: the cluster was replaced under the run. */
export function judgeMissingJob(run: TrainRun): TrainFailure {
  return {
    kind: 'failed',
    type: ErrorTypes.ClusterLost,
    message: `training job ${run.submissionId} no longer exists on ${run.clusterName}: the cluster was replaced or lost`,
    stopJob: false,
  };
}

/** What to do after a poll that found the job. */
export function judgeTrainPoll(run: TrainRun, poll: TrainPoll): TrainVerdict {
  const { job, log, beat } = poll;
  switch (job.status) {
    case 'SUCCEEDED':
      return judgeExit0(run, log, poll.checkpoint);
    case 'FAILED': {
      const failure = classifyJobFailure(job.driverExitCode, log.failureText);
      const disk =
        failure.type === ErrorTypes.CheckpointDiskFull
          ? `; ${formatGb(job.checkpointFreeBytes)} free on ${run.checkpointDir} now`
          : '';
      return {
        kind: 'failed',
        type: failure.type,
        message: `training job ${run.submissionId} failed ${atStep(beat)}: ${failure.reason}${disk}. ${job.message}\n${quotedTail(log)}`,
        stopJob: false,
        details: beat,
      };
    }
    case 'STOPPED':
      return {
        kind: 'failed',
        type: ErrorTypes.TrainingFailed,
        message: `training job ${run.submissionId} was STOPPED ${atStep(beat)}: ${job.message}\n${quotedTail(log)}`,
        stopJob: false,
        details: beat,
      };
    default: {
      const lastStepSeen = log.lastStep >= run.totalTrainingSteps;
      return (
        judgeCluster(run, job.cluster, beat) ??
        watchdog(run, beat, poll.now) ?? { kind: 'continue', lastStepSeen }
      );
    }
  }
}

const atStep = (beat: TrainHeartbeat) => `at step ${beat.step} (last checkpoint ${beat.lastCheckpointStep})`;

const quotedTail = (log: TrainLogSeen) => logTail(log.tail.join('\n'));

/**
 * Exit 0 is a finished run only with every step and the last checkpoint, or with RAGEN's early
 * stop; anything else ended short (TrainingIncomplete).
 */
function judgeExit0(run: TrainRun, log: TrainLogSeen, checkpoint: number): TrainVerdict {
  const ended = { finalStep: log.lastStep, lastCheckpointStep: checkpoint };
  if (log.earlyStopped.length > 0) {
    const reasons = log.earlyStopped.map((k) => k.slice('early_stopped/'.length));
    return { kind: 'earlyStopped', ...ended, reasons };
  }
  const total = run.totalTrainingSteps;
  if (log.lastStep < total || checkpoint < total) {
    return {
      kind: 'failed',
      type: ErrorTypes.TrainingIncomplete,
      message: `trainer exited 0 at step ${log.lastStep}/${total} (last checkpoint ${checkpoint}) without an early_stopped/* metric`,
      stopJob: false,
    };
  }
  return { kind: 'finished', ...ended };
}

/**
 * queued during training: Kueue took the cluster back (preemption); its Pods are gone. Its own type:
 * not a failure of the run, and a fresh cluster in the queue can take it further (a campaign's
 * next attempt, from the latest checkpoint).
 */
export function preempted(run: TrainRun, cluster: ClusterSeen, beat: TrainHeartbeat): TrainFailure {
  return {
    kind: 'failed',
    type: ErrorTypes.ClusterPreempted,
    message: `cluster ${run.clusterName} was preempted during training at step ${beat.step} (last checkpoint ${beat.lastCheckpointStep}): ${cluster.message ?? ''}`,
    stopJob: false,
    details: beat,
  };
}

/** A running job's cluster: a lost worker (the job is stopped), or the cluster gone, failed or queued. */
function judgeCluster(run: TrainRun, cluster: ClusterSeen, beat: TrainHeartbeat): TrainFailure | undefined {
  if (cluster.phase === 'ready' && cluster.workersAlive < run.wantWorkers) {
    return {
      kind: 'failed',
      type: ErrorTypes.ClusterLost,
      message: `a worker node of ${run.clusterName} was lost during training (${cluster.workersAlive}/${run.wantWorkers} alive) at step ${beat.step}`,
      stopJob: true,
      details: beat,
    };
  }
  if (cluster.phase === 'queued') return preempted(run, cluster, beat);
  if (cluster.phase === 'gone' || cluster.phase === 'failed') {
    return {
      kind: 'failed',
      type: ErrorTypes.ClusterLost,
      message: `cluster ${run.clusterName} is ${cluster.phase} during training: ${cluster.message ?? ''}`,
      stopJob: false,
      details: beat,
    };
  }
  return undefined;
}

/**
 * deadlines.firstStepSeconds from the submission until the first training step (model download,
 * worker setup, initial validation), then deadlines.noProgressSeconds between steps or checkpoints.
 */
function watchdog(run: TrainRun, beat: TrainHeartbeat, now: number): TrainFailure | undefined {
  const { firstStepSeconds } = run.deadlines;
  const { noProgressSeconds } = run.deadlines;
  if (!hasTrained(beat, run.startStep)) {
    if (now - (beat.submittedAt ?? beat.lastProgressAt) <= firstStepSeconds * 1000) return undefined;
    return {
      kind: 'failed',
      type: ErrorTypes.NoProgress,
      message: `no training step within deadlines.firstStepSeconds=${firstStepSeconds} s of the submission (model download, worker setup, initial validation); the job was stopped`,
      stopJob: true,
      details: beat,
    };
  }
  if (now - beat.lastProgressAt <= noProgressSeconds * 1000) return undefined;
  return {
    kind: 'failed',
    type: ErrorTypes.NoProgress,
    message: `no new step or checkpoint for deadlines.noProgressSeconds=${noProgressSeconds} s (stuck at step ${beat.step}); the job was stopped`,
    stopJob: true,
    details: beat,
  };
}
