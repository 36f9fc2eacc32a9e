import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyTrainLogState, failureText, feedTrainLog } from '../../src/activities/train/train-log.js';
import type { ErrorType } from '../../src/domain/failures/error-types.js';
import type { TrainHeartbeat } from '../../src/domain/run/progress.js';
import {
  type ClusterSeen,
  type TrainFailure,
  type TrainJobSeen,
  type TrainLogSeen,
  type TrainRun,
  type TrainVerdict,
  judgeMissingJob,
  judgeSilentHead,
  judgeTrainPoll,
  trainProgress,
} from '../../src/domain/train/train-poll.js';

const NOW = 1_700_000_000_000;
const S = 1000;

const run: TrainRun = {
  submissionId: 'c-a0-train-0',
  clusterName: 'c-a0',
  checkpointDir: '/ckpt/run',
  totalTrainingSteps: 20,
  startStep: 0,
  wantWorkers: 2,
  deadlines: { noProgressSeconds: 300, firstStepSeconds: 3600 },
};

/** The log as the activity sees it: real driver lines through the activity's own parser. */
function logOf(text: string): TrainLogSeen {
  const state = emptyTrainLogState();
  feedTrainLog(state, text);
  return { ...state, failureText: failureText(state) };
}

const ready: ClusterSeen = { phase: 'ready', workersAlive: 2 };
const running = (cluster: ClusterSeen = ready): TrainJobSeen => ({ status: 'RUNNING', cluster });
const failed = (driverExitCode: number, checkpointFreeBytes?: number): TrainJobSeen => ({
  status: 'FAILED',
  driverExitCode,
  message: `Job entrypoint command failed with exit code ${driverExitCode}`,
  checkpointFreeBytes,
});

/** A heartbeat at step 5, its last progress a few seconds ago. */
const beatAt = (over: Partial<TrainHeartbeat> = {}): TrainHeartbeat => ({
  step: 5,
  lastCheckpointStep: 0,
  submissionId: run.submissionId,
  lastProgressAt: NOW - 5 * S,
  submittedAt: NOW - 600 * S,
  ...over,
});

/** Failures are checked by type, stop, details and message; other verdicts whole. */
type Want =
  | Exclude<TrainVerdict, TrainFailure>
  | { failed: ErrorType; stopJob: boolean; details: boolean; message: string | RegExp };

interface Row {
  name: string;
  job: TrainJobSeen;
  log: string;
  checkpoint?: number;
  beat?: Partial<TrainHeartbeat>;
  run?: Partial<TrainRun>;
  want: Want;
}

const rows: Row[] = [
  {
    name: 'running, a step logged moments ago: continue',
    job: running(),
    log: 'step:5 - critic/score/mean:1\n',
    want: { kind: 'continue', lastStepSeen: false },
  },
  {
    name: 'running past the last step (it only saves and exits now): continue, polling fast',
    job: running(),
    log: '(TaskRunner pid=1) step:20 - critic/score/mean:np.float64(0.5)\n',
    beat: { step: 20 },
    want: { kind: 'continue', lastStepSeen: true },
  },
  {
    name: 'a cluster still pending (no rule fires): continue',
    job: running({ phase: 'pending', workersAlive: 0 }),
    log: 'step:5 - x:1\n',
    want: { kind: 'continue', lastStepSeen: false },
  },
  {
    name: 'exit 0 with every step and the last checkpoint: finished',
    job: { status: 'SUCCEEDED' },
    log: 'step:19 - critic/score/mean:1\nstep:20 - critic/score/mean:2\n',
    checkpoint: 20,
    beat: { step: 20, lastCheckpointStep: 20 },
    want: { kind: 'finished', finalStep: 20, lastCheckpointStep: 20 },
  },
  {
    name: "exit 0 with RAGEN's early_stopped/low_validation_success at step 7: earlyStopped",
    job: { status: 'SUCCEEDED' },
    log: '(TaskRunner pid=1) step:7 - val-env/CoordSokoban/success:np.float64(0.0) - early_stopped/low_validation_success:1.0\n[Early Stopping] val-env/CoordSokoban/success below 0.1 on 2 consecutive validations; stopping at step 7\n',
    checkpoint: 5,
    want: { kind: 'earlyStopped', finalStep: 7, lastCheckpointStep: 5, reasons: ['low_validation_success'] },
  },
  {
    name: 'exit 0 short of totalTrainingSteps without an early stop: TrainingIncomplete, no details',
    job: { status: 'SUCCEEDED' },
    log: 'step:7 - critic/score/mean:1\n',
    want: {
      failed: 'TrainingIncomplete',
      stopJob: false,
      details: false,
      message: 'trainer exited 0 at step 7/20 (last checkpoint 0) without an early_stopped/* metric',
    },
  },
  {
    name: 'exit 0 with an early_stopped/* metric logged as 0 (not fired): TrainingIncomplete',
    job: { status: 'SUCCEEDED' },
    log: 'step:7 - early_stopped/empty_filtered_steps:0.0 - critic/score/mean:1\n',
    want: { failed: 'TrainingIncomplete', stopJob: false, details: false, message: /exited 0 at step 7\/20/ },
  },
  {
    name: 'exit 0 at the last step without its checkpoint: TrainingIncomplete',
    job: { status: 'SUCCEEDED' },
    log: 'step:20 - critic/score/mean:1\n',
    checkpoint: 10,
    want: {
      failed: 'TrainingIncomplete',
      stopJob: false,
      details: false,
      message: 'trainer exited 0 at step 20/20 (last checkpoint 10) without an early_stopped/* metric',
    },
  },
  {
    name: 'FAILED with exit 2 (the payload refused its config): TrainingConfigInvalid',
    job: failed(2),
    log: "step:3 - critic/score/mean:1\nconfig error: unknown override key 'trainer.no_such'\n",
    beat: { step: 3 },
    want: {
      failed: 'TrainingConfigInvalid',
      stopJob: false,
      details: true,
      message:
        "training job c-a0-train-0 failed at step 3 (last checkpoint 0): the trainer refused its configuration (exit 2: config error: unknown override key 'trainer.no_such'); fix trainer.overrides or the spec, another attempt cannot. Job entrypoint command failed with exit code 2\nstep:3 - critic/score/mean:1\nconfig error: unknown override key 'trainer.no_such'",
    },
  },
  {
    name: "FAILED with exit 1 and Hydra's override error: TrainingConfigInvalid",
    job: failed(1),
    log: "Error executing job with overrides: ['trainer.no_such=1']\nhydra.errors.ConfigCompositionException: Could not override 'trainer.no_such'.\n",
    want: { failed: 'TrainingConfigInvalid', stopJob: false, details: true, message: /Could not override/ },
  },
  {
    name: "FAILED with verl's GPU check: TrainingResourceShortfall",
    job: failed(1),
    log: '(TaskRunner pid=9) ValueError: Total available GPUs 1 is less than total desired GPUs 2\n',
    want: {
      failed: 'TrainingResourceShortfall',
      stopJob: false,
      details: true,
      message: /too few GPUs .*Total available GPUs 1/,
    },
  },
  {
    name: 'FAILED with exit 4 (a refused checkpoint): CheckpointUnusable',
    job: failed(4),
    log: 'checkpoint error: world size changed\n',
    want: { failed: 'CheckpointUnusable', stopJob: false, details: true, message: /world size changed/ },
  },
  {
    name: 'FAILED with a CUDA crash: TrainingFailed, the log tail quoted',
    job: failed(1),
    log: 'step:3 - x:1\nRuntimeError: CUDA error: an illegal memory access\n',
    want: {
      failed: 'TrainingFailed',
      stopJob: false,
      details: true,
      message:
        /the trainer crashed \(exit 1\)\. Job entrypoint command failed with exit code 1\nstep:3 - x:1\nRuntimeError: CUDA error/,
    },
  },
  {
    name: 'FAILED with ENOSPC while saving: CheckpointDiskFull, the free space named',
    job: failed(1, 1.5e9),
    log: "step:20 - x:1\nOSError: [Errno 28] No space left on device: '/ckpt/run/global_step_20/actor'\n",
    beat: { step: 20, lastCheckpointStep: 10 },
    want: {
      failed: 'CheckpointDiskFull',
      stopJob: false,
      details: true,
      message:
        /^training job c-a0-train-0 failed at step 20 \(last checkpoint 10\): the checkpoint volume is full \(OSError: \[Errno 28\][^)]*\); 1\.50 GB free on \/ckpt\/run now\. /,
    },
  },
  {
    name: 'FAILED with a full disk, free space unknown',
    job: failed(2, undefined),
    log: 'Error: ENOSPC: no space left on device, write\n',
    want: {
      failed: 'CheckpointDiskFull',
      stopJob: false,
      details: true,
      message: /; unknown free on \/ckpt\/run now\./,
    },
  },
  {
    name: 'STOPPED by someone else: TrainingFailed',
    job: { status: 'STOPPED', message: 'Job was intentionally stopped.' },
    log: 'step:5 - x:1\n',
    beat: { lastCheckpointStep: 5 },
    want: {
      failed: 'TrainingFailed',
      stopJob: false,
      details: true,
      message:
        'training job c-a0-train-0 was STOPPED at step 5 (last checkpoint 5): Job was intentionally stopped.\nstep:5 - x:1',
    },
  },
  {
    name: 'a worker node lost while the cluster is ready: ClusterLost, the job stopped',
    job: running({ phase: 'ready', workersAlive: 1 }),
    log: 'step:5 - x:1\n',
    want: {
      failed: 'ClusterLost',
      stopJob: true,
      details: true,
      message: 'a worker node of c-a0 was lost during training (1/2 alive) at step 5',
    },
  },
  {
    name: 'a lost worker is named before a passed deadline',
    job: running({ phase: 'ready', workersAlive: 1 }),
    log: 'step:5 - x:1\n',
    beat: { lastProgressAt: NOW - 3600 * S },
    want: { failed: 'ClusterLost', stopJob: true, details: true, message: /worker node of c-a0 was lost/ },
  },
  {
    name: 'the cluster gone: ClusterLost',
    job: running({ phase: 'gone', workersAlive: 0, message: 'RayCluster c-a0 not found' }),
    log: 'step:5 - x:1\n',
    want: {
      failed: 'ClusterLost',
      stopJob: false,
      details: true,
      message: 'cluster c-a0 is gone during training: RayCluster c-a0 not found',
    },
  },
  {
    name: 'the cluster failed: ClusterLost',
    job: running({ phase: 'failed', workersAlive: 0 }),
    log: 'step:5 - x:1\n',
    want: {
      failed: 'ClusterLost',
      stopJob: false,
      details: true,
      message: 'cluster c-a0 is failed during training: ',
    },
  },
  {
    name: 'the cluster queued again (Kueue preemption): ClusterPreempted, not ClusterLost',
    job: running({ phase: 'queued', workersAlive: 0, message: 'suspended by Kueue' }),
    log: 'step:5 - x:1\n',
    want: {
      failed: 'ClusterPreempted',
      stopJob: false,
      details: true,
      message:
        /^cluster c-a0 was preempted during training at step \d+ \(last checkpoint \d+\): suspended by Kueue$/,
    },
  },
  {
    name: 'resumed at step 10, only its validation line, 10 min in: firstStepSeconds applies, not noProgressSeconds',
    job: running(),
    log: 'step:10 - val-env/CoordSokoban/success:0.5\n',
    run: { startStep: 10, deadlines: { noProgressSeconds: 60, firstStepSeconds: 3600 } },
    beat: { step: 10, lastCheckpointStep: 10, lastProgressAt: NOW - 600 * S, submittedAt: NOW - 600 * S },
    want: { kind: 'continue', lastStepSeen: false },
  },
  {
    name: 'no training step within firstStepSeconds of the submission: NoProgress, the job stopped',
    job: running(),
    log: 'step:10 - val-env/CoordSokoban/success:0.5\n',
    run: { startStep: 10, deadlines: { noProgressSeconds: 60, firstStepSeconds: 300 } },
    beat: { step: 10, lastCheckpointStep: 10, lastProgressAt: NOW - 301 * S, submittedAt: NOW - 301 * S },
    want: {
      failed: 'NoProgress',
      stopJob: true,
      details: true,
      message:
        'no training step within deadlines.firstStepSeconds=300 s of the submission (model download, worker setup, initial validation); the job was stopped',
    },
  },
  {
    name: 'no submittedAt in the heartbeat: firstStepSeconds counts from lastProgressAt',
    job: running(),
    log: '',
    run: { deadlines: { noProgressSeconds: 60, firstStepSeconds: 3600 } },
    beat: { step: 0, lastProgressAt: NOW - 3601 * S, submittedAt: undefined },
    want: { failed: 'NoProgress', stopJob: true, details: true, message: /firstStepSeconds=3600 s/ },
  },
  {
    name: 'trained, then nothing new for longer than noProgressSeconds: NoProgress, the job stopped',
    job: running(),
    log: 'step:10 - x:1\nstep:11 - x:1\n',
    run: { startStep: 10, deadlines: { noProgressSeconds: 60, firstStepSeconds: 3600 } },
    beat: { step: 11, lastCheckpointStep: 10, lastProgressAt: NOW - 61 * S },
    want: {
      failed: 'NoProgress',
      stopJob: true,
      details: true,
      message:
        'no new step or checkpoint for deadlines.noProgressSeconds=60 s (stuck at step 11); the job was stopped',
    },
  },
  {
    name: 'trained, quiet for exactly noProgressSeconds: continue',
    job: running(),
    log: 'step:11 - x:1\n',
    run: { startStep: 10, deadlines: { noProgressSeconds: 60, firstStepSeconds: 3600 } },
    beat: { step: 11, lastProgressAt: NOW - 60 * S },
    want: { kind: 'continue', lastStepSeen: false },
  },
];

describe('train poll verdicts (judgeTrainPoll), one row per rule', () => {
  for (const row of rows) {
    it(row.name, () => {
      const log = logOf(row.log);
      const beat = beatAt(row.beat);
      const verdict = judgeTrainPoll(
        { ...run, ...row.run },
        { job: row.job, log, checkpoint: row.checkpoint ?? beat.lastCheckpointStep, beat, now: NOW },
      );
      checkVerdict(verdict, row.want, beat);
    });
  }
});

function checkVerdict(verdict: TrainVerdict | undefined, want: Want, beat: TrainHeartbeat): void {
  if (!('failed' in want)) {
    assert.deepEqual(verdict, want);
    return;
  }
  assert.equal(verdict?.kind, 'failed', JSON.stringify(verdict));
  if (verdict.kind !== 'failed') return;
  assert.equal(verdict.type, want.failed);
  assert.equal(verdict.stopJob, want.stopJob);
  assert.deepEqual(verdict.details, want.details ? beat : undefined);
  if (typeof want.message === 'string') assert.equal(verdict.message, want.message);
  else assert.match(verdict.message, want.message);
}

describe('the heartbeat after a poll (trainProgress)', () => {
  const beat = beatAt({ step: 5, lastCheckpointStep: 0 });
  for (const [name, seen, want] of [
    [
      'nothing new',
      { lastStep: 5, checkpoint: 0 },
      { progressed: false, newCheckpoint: false, step: 5, ckpt: 0 },
    ],
    [
      'a new step',
      { lastStep: 6, checkpoint: 0 },
      { progressed: true, newCheckpoint: false, step: 6, ckpt: 0 },
    ],
    [
      'a new checkpoint',
      { lastStep: 5, checkpoint: 5 },
      { progressed: true, newCheckpoint: true, step: 5, ckpt: 5 },
    ],
    ['both', { lastStep: 10, checkpoint: 10 }, { progressed: true, newCheckpoint: true, step: 10, ckpt: 10 }],
    [
      'a log behind the heartbeat (a retry before the copy caught up)',
      { lastStep: 3, checkpoint: 0 },
      { progressed: false, newCheckpoint: false, step: 5, ckpt: 0 },
    ],
  ] as const) {
    it(name, () => {
      const progress = trainProgress(beat, { ...seen, now: NOW });
      assert.equal(progress.progressed, want.progressed);
      assert.equal(progress.newCheckpoint, want.newCheckpoint);
      assert.equal(progress.beat.step, want.step);
      assert.equal(progress.beat.lastCheckpointStep, want.ckpt);
      // Progress restarts the watchdog's clock; the submission time never moves.
      assert.equal(progress.beat.lastProgressAt, want.progressed ? NOW : beat.lastProgressAt);
      assert.equal(progress.beat.submittedAt, beat.submittedAt);
    });
  }
});

describe('a head that does not answer (judgeSilentHead), a job the head does not know (judgeMissingJob)', () => {
  const beat = beatAt({ step: 7, lastCheckpointStep: 5 });
  it('the cluster queued again (Kueue suspended it, the head Pod deleted): ClusterPreempted', () => {
    checkVerdict(
      judgeSilentHead(run, { phase: 'queued', workersAlive: 0, message: 'suspended by Kueue' }, beat),
      {
        failed: 'ClusterPreempted',
        stopJob: false,
        details: true,
        message:
          'cluster c-a0 was preempted during training at step 7 (last checkpoint 5): suspended by Kueue',
      },
      beat,
    );
  });
  it('the cluster gone: ClusterLost, with the step and checkpoint', () => {
    checkVerdict(
      judgeSilentHead(run, { phase: 'gone', workersAlive: 0, message: 'deleted' }, beat),
      {
        failed: 'ClusterLost',
        stopJob: false,
        details: true,
        message: 'cluster c-a0 is gone during training (at step 7, last checkpoint 5): deleted',
      },
      beat,
    );
  });
  it('the cluster failed: ClusterLost', () => {
    checkVerdict(
      judgeSilentHead(run, { phase: 'failed', workersAlive: 0 }, beat),
      {
        failed: 'ClusterLost',
        stopJob: false,
        details: true,
        message: 'cluster c-a0 is failed during training (at step 7, last checkpoint 5): ',
      },
      beat,
    );
  });
  for (const phase of ['ready', 'pending'] as const) {
    it(`the cluster ${phase}: no verdict (the head's error stands; the retry policy decides)`, () => {
      assert.equal(judgeSilentHead(run, { phase, workersAlive: 2 }, beat), undefined);
    });
  }
  it('the job unknown to the head: ClusterLost, without details', () => {
    checkVerdict(
      judgeMissingJob(run),
      {
        failed: 'ClusterLost',
        stopJob: false,
        details: false,
        message: 'training job c-a0-train-0 no longer exists on c-a0: the cluster was replaced or lost',
      },
      beat,
    );
  });
});
