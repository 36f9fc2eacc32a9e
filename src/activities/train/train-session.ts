import { Context } from '@temporalio/activity';
import { stepOfCheckpointPath } from '../../domain/campaign/campaign.js';
import { shellQuote, trainArgv } from '../../domain/ragen/entrypoint.js';
import { workerNodes } from '../../domain/spec/experiment.js';
import { submissionId } from '../../domain/spec/naming.js';
import { runArchiveDir } from '../../domain/spec/paths.js';
import type { TrainHeartbeat } from '../../domain/run/progress.js';
import {
  type TrainFailure,
  type TrainJobSeen,
  type TrainRun,
  type TrainVerdict,
  hasTrained,
  judgeMissingJob,
  judgeSilentHead,
  preempted,
  judgeTrainPoll,
  trainProgress,
} from '../../domain/train/train-poll.js';
import type { ComputeBackend } from '../../backends/backend.js';
import type { RayHeadApi, RayJobInfo } from '../../backends/ray/dashboard-client.js';
import { backendOf } from '../common/backend-of.js';
import { shippedWorkingDir } from '../code/code-shipping.js';
import { rayHeadOf } from '../common/ray-head-of.js';
import { readTracker } from '../checkpoints/checkpoints.js';
import { freeBytes, warnIfCheckpointsWillNotFit } from '../checkpoints/checkpoint-space-check.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { pollDelays } from '../common/poll-schedule.js';
import { ProgressCadence } from './progress-cadence.js';
import {
  beat as recordHeartbeat,
  heartbeatAndWait,
  previousDetails,
  workflowIdOfActivity,
} from '../common/heartbeat-loop.js';
import { JobLogReader } from './job-log-reader.js';
import { stoppingJobOnCancel } from '../common/ray-job.js';
import { failureText, feedTrainLog } from './train-log.js';
import { TrainLogStore } from './train-log-store.js';
import { trainJobEnv } from './train-job-env.js';
import type { TrainInput, TrainResult } from './train-io.js';
import { validationReporter } from './validation-reports.js';

/**
 * One attempt of the train activity: the job's id, argv and watchdog clocks (from the previous
 * attempt's heartbeat, so a retry finds the same job), the followed driver log and its parse state.
 * Each poll gathers observations, asks src/domain/train/train-poll.ts for the verdict, and acts on it.
 */
export class TrainSession {
  private readonly id: string;
  private readonly argv: string[];
  private readonly run: TrainRun;
  /** Moved in place: keep-alive heartbeats (while a dashboard call is retried) send this object. */
  private readonly beat: TrainHeartbeat;
  private readonly startStep: number;
  private readonly workflowId = workflowIdOfActivity();
  private readonly cadence: ProgressCadence;
  private readonly validations: ReturnType<typeof validationReporter> | undefined;
  private spaceChecked = false;
  private endDelays: (() => number) | undefined;

  private constructor(
    private readonly deps: ActivityDeps,
    private readonly input: TrainInput,
    private readonly backend: ComputeBackend,
    private readonly dashboard: RayHeadApi,
    private readonly store: TrainLogStore,
    private readonly reader: JobLogReader,
  ) {
    const { spec, handle, checkpointDir, resume } = input;
    this.argv = backend.resolveArgv(trainArgv(spec, checkpointDir, resume));
    this.id = submissionId(handle.name, 'train');
    const now = Date.now();
    this.beat = previousDetails<TrainHeartbeat>() ?? {
      step: 0,
      lastCheckpointStep: 0,
      submissionId: this.id,
      lastProgressAt: now,
      submittedAt: now,
    };
    // The checkpoint resumed from: its validation line (step:N) is not a training step.
    this.startStep = resume.mode === 'resume_path' ? stepOfCheckpointPath(resume.path) : 0;
    this.run = {
      submissionId: this.id,
      clusterName: handle.name,
      checkpointDir,
      totalTrainingSteps: spec.trainer.totalTrainingSteps,
      startStep: this.startStep,
      wantWorkers: workerNodes(spec),
      deadlines: spec.deadlines,
    };
    const pending = deps.stopAtCheckpointPending;
    this.cadence = new ProgressCadence(
      hasTrained(this.beat, this.startStep),
      async () => (pending ? pending(this.workflowId) : true),
      deps.checkpointSignalIntervalMs,
    );
    this.validations = input.reportValidations
      ? validationReporter(this.startStep, input.reportSteps)
      : undefined;
  }

  /** The driver log is followed (each byte once) and copied next to the manifest (`logs` reads the copy). */
  static async open(deps: ActivityDeps, input: TrainInput): Promise<TrainSession> {
    const { spec, handle } = input;
    const dashboard = await rayHeadOf(deps, handle);
    // The parse state is saved with the copy, so a retry parses only what the copy lacks.
    const archive = runArchiveDir(spec.storage, spec.name, workflowIdOfActivity());
    const store = await TrainLogStore.open(archive, handle.name);
    const reader = await JobLogReader.resume(dashboard, submissionId(handle.name, 'train'), store.logPath);
    return new TrainSession(deps, input, backendOf(deps, spec.backend), dashboard, store, reader);
  }

  /** Submit (a retry finds its own job by the submission id) and poll until the verdict ends it. */
  async submitAndFollow(): Promise<TrainResult> {
    const { spec, checkpointDir, wandb } = this.input;
    const env = await trainJobEnv(spec, checkpointDir, wandb ?? { workflowId: this.workflowId });
    const workingDir = await shippedWorkingDir(this.dashboard, spec, this.store.runDir);
    await this.dashboard.submitJob(this.id, shellQuote(this.argv), env, [], workingDir);
    return stoppingJobOnCancel(this.dashboard, this.id, async () => {
      try {
        return await this.follow();
      } finally {
        this.reader.close();
        // The series and summary at the end, whatever the end (the archive's summary reads them).
        await this.store.save(this.reader.bytesCopied).catch((err: unknown) => {
          Context.current().log.warn(`could not save the metrics series: ${(err as Error).message}`);
        });
      }
    });
  }

  private async follow(): Promise<TrainResult> {
    for (;;) {
      const verdict = await this.pollOnce();
      switch (verdict.kind) {
        case 'failed':
          return this.fail(verdict);
        case 'finished':
        case 'earlyStopped':
          return this.resultOf(verdict);
        case 'continue':
          // After the last step the job only saves and exits: its end is seen within a quarter second.
          if (verdict.lastStepSeen) this.endDelays ??= pollDelays(this.deps.pollIntervalMs);
          await heartbeatAndWait(this.beat, this.endDelays ? this.endDelays() : this.deps.pollIntervalMs);
      }
    }
  }

  /** One poll: the job, its new log lines, the checkpoint tracker; progress acted on; the verdict. */
  private async pollOnce(): Promise<TrainVerdict> {
    const job = await this.readJob().catch(async (err: unknown) => {
      // The head not answering may mean the cluster itself is gone (deleted by someone else):
      // say so and stop, rather than retry against a cluster that will not come back.
      const lost = judgeSilentHead(
        this.run,
        await this.backend.describeCluster(this.input.handle),
        this.beat,
      );
      if (lost) return this.fail(lost);
      throw err;
    });
    if (!job) return this.fail(judgeMissingJob(this.run));
    const summary = this.store.state;
    const checkpoint = (await readTracker(this.input.checkpointDir)) ?? this.beat.lastCheckpointStep;
    const progress = trainProgress(this.beat, { lastStep: summary.lastStep, checkpoint, now: Date.now() });
    if (progress.progressed) {
      Object.assign(this.beat, progress.beat);
      await this.onProgress(progress.newCheckpoint);
    }
    const log = { ...summary, failureText: failureText(summary) };
    const seen = await this.seeJob(job);
    const verdict = judgeTrainPoll(this.run, {
      job: seen,
      log,
      checkpoint,
      beat: this.beat,
      now: Date.now(),
    });
    // The final step in the heartbeat details, whether the run is complete or not.
    if (job.status === 'SUCCEEDED') recordHeartbeat(this.beat);
    if (verdict.kind === 'failed' && (job.status === 'FAILED' || job.status === 'STOPPED')) {
      // A job that ended because Kueue took its cluster (suspended, Pods deleted) was preempted.
      const cluster = await this.backend.describeCluster(this.input.handle).catch(() => undefined);
      if (cluster?.phase === 'queued') return preempted(this.run, cluster, this.beat);
    }
    return verdict;
  }

  /** The job's status, and its new driver log lines parsed (validations reported as they appear). */
  private async readJob(): Promise<RayJobInfo | undefined> {
    const job = await this.dashboard.job(this.id);
    if (!job) return undefined;
    const terminal = job.status === 'SUCCEEDED' || job.status === 'FAILED' || job.status === 'STOPPED';
    const { lines } = await this.reader.poll(job.driverNodeId, { final: terminal });
    const steps = feedTrainLog(this.store.state, lines);
    for (const validation of this.validations?.newValidations(steps) ?? [])
      await this.deps.reportProgress(this.workflowId, { validation }).catch(() => undefined);
    return job;
  }

  /** The job as judgeTrainPoll reads it: the backend is asked about the cluster only while the job runs. */
  private async seeJob(job: RayJobInfo): Promise<TrainJobSeen> {
    switch (job.status) {
      case 'SUCCEEDED':
        return { status: job.status };
      case 'FAILED': {
        const checkpointFreeBytes = await freeBytes(this.input.checkpointDir);
        const { driverExitCode, message } = job;
        return { status: job.status, driverExitCode, message, checkpointFreeBytes };
      }
      case 'STOPPED':
        return { status: job.status, message: job.message };
      default:
        return { status: job.status, cluster: await this.backend.describeCluster(this.input.handle) };
    }
  }

  /** A new step or checkpoint (beat already moved): save the log state, check space once, signal when due. */
  private async onProgress(newCheckpoint: boolean): Promise<void> {
    const { beat } = this;
    if (newCheckpoint) await this.store.save(this.reader.bytesCopied);
    if (newCheckpoint && !this.spaceChecked) {
      this.spaceChecked = true;
      await warnIfCheckpointsWillNotFit(this.input.spec, this.input.checkpointDir, beat.lastCheckpointStep);
    }
    // The live step is in the heartbeat; signals (history) only as ProgressCadence allows.
    const due = { trained: hasTrained(beat, this.startStep), newCheckpoint, now: beat.lastProgressAt };
    if (await this.cadence.due(due)) {
      const progress = { step: beat.step, lastCheckpointStep: beat.lastCheckpointStep };
      await this.deps.reportProgress(this.workflowId, progress).catch(() => undefined);
    }
  }

  /** Stop the job where the verdict says it may still run, then fail for good. */
  private async fail(failure: TrainFailure): Promise<never> {
    if (failure.stopJob) await this.dashboard.stopJob(this.id);
    throw permanent(failure.type, failure.message, failure.details);
  }

  private resultOf(verdict: Extract<TrainVerdict, { kind: 'finished' | 'earlyStopped' }>): TrainResult {
    const { finalStep, lastCheckpointStep } = verdict;
    const lastMetrics = this.store.state.lastMetrics;
    const result = { finalStep, lastCheckpointStep, lastMetrics, entrypoint: this.argv };
    if (verdict.kind === 'finished') return result;
    return { ...result, earlyStopped: { step: finalStep, reasons: verdict.reasons } };
  }
}
