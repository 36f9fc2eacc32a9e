import { Context } from '@temporalio/activity';
import { mkdir, stat, statfs } from 'node:fs/promises';
import { type WandbIds, wandbJobEnv } from '../domain/wandb-env.js';
import { stepOfCheckpointPath } from '../domain/campaign.js';
import type { ClusterHandle } from '../domain/cluster.js';
import { modelJobEnv } from '../domain/model.js';
import { type ResumeFrom, shellQuote, trainArgv } from '../domain/entrypoint.js';
import { type ExperimentSpec, workerNodes } from '../domain/experiment.js';
import { submissionId } from '../domain/naming.js';
import { checkpointPath, metricsPath, runArchiveDir } from '../domain/paths.js';
import type { TrainHeartbeat } from '../domain/progress.js';
import {
  type TrainFailure,
  type TrainJobSeen,
  type TrainRun,
  hasTrained,
  judgeMissingJob,
  judgeSilentHead,
  judgeTrainPoll,
  trainProgress,
} from '../domain/train-poll.js';
import type { RayJobInfo } from '../backends/ray/dashboard-client.js';
import { backendOf } from './backend-of.js';
import { rayHeadOf } from './ray-head-of.js';
import { checkpointSpaceWarning, expectedSaves, formatGb } from '../domain/checkpoint-space.js';
import { filesUnder, readTracker } from './checkpoints.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';
import { pollDelays } from './poll-schedule.js';
import { ProgressCadence } from './progress-cadence.js';
import {
  beat as recordHeartbeat,
  heartbeatAndWait,
  previousDetails,
  workflowIdOfActivity,
} from './heartbeat-loop.js';
import { JobLogReader } from './job-log-reader.js';
import { stoppingJobOnCancel } from './ray-job.js';
import { failureText, feedTrainLog } from './train-log.js';
import { TrainLogStore } from './train-log-store.js';
import { validationReporter } from './validation-reports.js';

export interface TrainInput {
  spec: ExperimentSpec;
  handle: ClusterHandle;
  checkpointDir: string;
  resume: ResumeFrom;
  /** Whose W&B run this is (when trainer.loggers includes wandb): see wandbJobEnv. */
  wandb?: WandbIds;
  /** Signal the workflow once per in-loop validation with its `val-env/...` metrics (a sweep's scheduler). */
  reportValidations?: boolean;
  /** Only the first validation at or past each of these steps (ASHA's rungs); absent = all. */
  reportSteps?: number[];
}

export interface TrainResult {
  finalStep: number;
  lastCheckpointStep: number;
  lastMetrics: Record<string, number>;
  entrypoint: string[];
  /** RAGEN stopped on its own (exit 0, `early_stopped/*` metrics): the reasons, e.g. `low_validation_success`. */
  earlyStopped?: { step: number; reasons: string[] };
}

/** Free bytes on the volume holding `dir` (for the disk-full message); undefined when unknown. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const s = await statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** After the run's first checkpoint: warn (worker log) when the rest will not fit, measured from it. */
async function warnIfCheckpointsWillNotFit(
  spec: ExperimentSpec,
  checkpointDir: string,
  step: number,
): Promise<void> {
  let bytes = 0;
  for (const file of await filesUnder(checkpointPath(checkpointDir, step)).catch(() => []))
    bytes += (await stat(file).catch(() => ({ size: 0 }))).size;
  const free = await freeBytes(checkpointDir);
  const warning =
    bytes > 0 && free !== undefined
      ? checkpointSpaceWarning(expectedSaves(spec.trainer, step), bytes, free, checkpointDir)
      : undefined;
  if (warning) Context.current().log.warn(`checkpoint ${step} is ${formatGb(bytes)}: ${warning}`);
}

/**
 * Stage 5. Run the trainer as a Ray job and poll it: progress from its console lines (verl's
 * `console` logger, always on), checkpoint existence from the tracker file, workers from the
 * dashboard. Heartbeat: {step, lastCheckpointStep, submissionId, lastProgressAt, submittedAt}; a
 * retry (new worker) finds the same job by its submission id and keeps the watchdog's clocks.
 * Watchdog: deadlines.firstStepSeconds until the first training step (model download, worker
 * setup, initial validation), then deadlines.noProgressSeconds between steps. Returns on all steps
 * done, or on RAGEN's early stop (`earlyStopped`, with the reasons). Fails permanently on a failed
 * job, typed by its exit code and log (src/domain/job-exit.ts), a lost worker node (ClusterLost) or
 * the watchdog (NoProgress). The rules are src/domain/train-poll.ts (pure, table-tested); this
 * activity gathers each poll's observations and acts on the verdict.
 */
export function createTrain(deps: ActivityDeps) {
  return async function train(input: TrainInput): Promise<TrainResult> {
    const { spec, handle, checkpointDir } = input;
    const backend = backendOf(deps, spec.backend);
    const dashboard = await rayHeadOf(deps, handle);
    const argv = backend.resolveArgv(trainArgv(spec, checkpointDir, input.resume));
    const id = submissionId(handle.name, 'train');
    const before = previousDetails<TrainHeartbeat>();
    const now = Date.now();
    const beat: TrainHeartbeat = before ?? {
      step: 0,
      lastCheckpointStep: 0,
      submissionId: id,
      lastProgressAt: now,
      submittedAt: now,
    };
    /** Step of the checkpoint resumed from: its validation line (step:N) is not a training step. */
    const startStep = input.resume.mode === 'resume_path' ? stepOfCheckpointPath(input.resume.path) : 0;
    const workflowId = workflowIdOfActivity();
    const run: TrainRun = {
      submissionId: id,
      clusterName: handle.name,
      checkpointDir,
      totalTrainingSteps: spec.trainer.totalTrainingSteps,
      startStep,
      wantWorkers: workerNodes(spec),
      deadlines: spec.deadlines,
    };
    const cadence = new ProgressCadence(
      hasTrained(beat, startStep),
      async () => (deps.stopAtCheckpointPending ? deps.stopAtCheckpointPending(workflowId) : true),
      deps.checkpointSignalIntervalMs,
    );
    let spaceChecked = false;
    let endDelays: (() => number) | undefined;
    // The driver log is followed (each byte once) and copied next to the manifest (`logs` reads the
    // copy); the parse state is saved there too, so a retry parses only what the copy lacks.
    const store = await TrainLogStore.open(runArchiveDir(spec.storage, spec.name, workflowId), handle.name);
    const summary = store.state;
    const reader = await JobLogReader.resume(dashboard, id, store.logPath);
    const validations = input.reportValidations
      ? validationReporter(startStep, input.reportSteps)
      : undefined;
    const readJob = async (submission: string) => {
      const job = await dashboard.job(submission);
      if (job) {
        const terminal = job.status === 'SUCCEEDED' || job.status === 'FAILED' || job.status === 'STOPPED';
        const { lines } = await reader.poll(job.driverNodeId, { final: terminal });
        const steps = feedTrainLog(summary, lines);
        for (const validation of validations?.newValidations(steps) ?? [])
          await deps.reportProgress(workflowId, { validation }).catch(() => undefined);
      }
      return { job };
    };
    const env: Record<string, string> = {};
    if (spec.trainer.loggers.includes('file')) {
      // verl 0.6 opens the file logger's path without creating its directory.
      await mkdir(checkpointDir, { recursive: true });
      env['VERL_FILE_LOGGER_PATH'] = metricsPath(checkpointDir);
    }
    Object.assign(env, wandbJobEnv(spec, input.wandb ?? { workflowId }));
    // A hub model was staged into HF_HOME on shared storage at preflight: every node loads it offline.
    Object.assign(env, modelJobEnv(spec.model));
    // The key from the worker's environment (local); on kuberay a Secret in kuberay.head.env holds it.
    if (env.WANDB_RUN_ID && spec.backend === 'local' && process.env.WANDB_API_KEY)
      env.WANDB_API_KEY = process.env.WANDB_API_KEY;
    await dashboard.submitJob(id, shellQuote(argv), env);
    /** The job as judgeTrainPoll reads it: the backend is asked about the cluster only while the job runs. */
    const seeJob = async (job: RayJobInfo): Promise<TrainJobSeen> => {
      switch (job.status) {
        case 'SUCCEEDED':
          return { status: job.status };
        case 'FAILED': {
          const checkpointFreeBytes = await freeBytes(checkpointDir);
          return {
            status: job.status,
            driverExitCode: job.driverExitCode,
            message: job.message,
            checkpointFreeBytes,
          };
        }
        case 'STOPPED':
          return { status: job.status, message: job.message };
        default:
          return { status: job.status, cluster: await backend.describeCluster(handle) };
      }
    };
    /** A new step or checkpoint (beat already moved): save the log state, check space once, signal when due. */
    const onProgress = async (newCheckpoint: boolean) => {
      if (newCheckpoint) await store.save(reader.bytesCopied);
      if (newCheckpoint && !spaceChecked) {
        spaceChecked = true;
        await warnIfCheckpointsWillNotFit(spec, checkpointDir, beat.lastCheckpointStep);
      }
      // The live step is in the heartbeat; signals (history) only as ProgressCadence allows.
      const due = { trained: hasTrained(beat, startStep), newCheckpoint, now: beat.lastProgressAt };
      if (await cadence.due(due)) {
        await deps
          .reportProgress(workflowId, { step: beat.step, lastCheckpointStep: beat.lastCheckpointStep })
          .catch(() => undefined);
      }
    };
    /** Stop the job where the verdict says it may still run, then fail for good. */
    const fail = async (failure: TrainFailure): Promise<never> => {
      if (failure.stopJob) await dashboard.stopJob(id);
      throw permanent(failure.type, failure.message, failure.details);
    };
    const poll = async (): Promise<TrainResult> => {
      for (;;) {
        const { job } = await readJob(id).catch(async (err: unknown) => {
          // The head not answering may mean the cluster itself is gone (deleted by someone else):
          // say so and stop, rather than retry against a cluster that will not come back.
          const lost = judgeSilentHead(run, await backend.describeCluster(handle), beat);
          if (lost) return fail(lost);
          throw err;
        });
        if (!job) return fail(judgeMissingJob(run));
        const checkpoint = (await readTracker(checkpointDir)) ?? beat.lastCheckpointStep;
        const progress = trainProgress(beat, { lastStep: summary.lastStep, checkpoint, now: Date.now() });
        if (progress.progressed) {
          // In place: keep-alive heartbeats (while a dashboard call is retried) send this object.
          Object.assign(beat, progress.beat);
          await onProgress(progress.newCheckpoint);
        }
        const log = { ...summary, failureText: failureText(summary) };
        const verdict = judgeTrainPoll(run, {
          job: await seeJob(job),
          log,
          checkpoint,
          beat,
          now: Date.now(),
        });
        // The final step in the heartbeat details, whether the run is complete or not.
        if (job.status === 'SUCCEEDED') recordHeartbeat(beat);
        switch (verdict.kind) {
          case 'failed':
            return fail(verdict);
          case 'finished':
          case 'earlyStopped': {
            const { finalStep, lastCheckpointStep } = verdict;
            const result = {
              finalStep,
              lastCheckpointStep,
              lastMetrics: summary.lastMetrics,
              entrypoint: argv,
            };
            if (verdict.kind === 'finished') return result;
            return { ...result, earlyStopped: { step: finalStep, reasons: verdict.reasons } };
          }
          case 'continue':
            // After the last step the job only saves and exits: its end is seen within a quarter second.
            if (verdict.lastStepSeen) endDelays ??= pollDelays(deps.pollIntervalMs);
            await heartbeatAndWait(beat, endDelays ? endDelays() : deps.pollIntervalMs);
        }
      }
    };
    return stoppingJobOnCancel(dashboard, id, async () => {
      try {
        return await poll();
      } finally {
        reader.close();
        // The series and summary at the end, whatever the end (the archive's summary reads them).
        await store.save(reader.bytesCopied).catch((err: unknown) => {
          Context.current().log.warn(`could not save the metrics series: ${(err as Error).message}`);
        });
      }
    });
  };
}
