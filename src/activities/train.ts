import { Context } from '@temporalio/activity';
import { mkdir, stat, statfs } from 'node:fs/promises';
import { type WandbIds, wandbJobEnv } from '../domain/wandb-env.js';
import { stepOfCheckpointPath } from '../domain/campaign.js';
import type { ClusterHandle } from '../domain/cluster.js';
import { type ResumeFrom, shellQuote, trainArgv } from '../domain/entrypoint.js';
import { ErrorTypes } from '../domain/error-types.js';
import { type ExperimentSpec, workerNodes } from '../domain/experiment.js';
import { classifyJobFailure } from '../domain/job-exit.js';
import { submissionId } from '../domain/naming.js';
import { checkpointPath, metricsPath, runArchiveDir } from '../domain/paths.js';
import type { TrainHeartbeat } from '../domain/progress.js';
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
import { logTail } from '../domain/log-tail.js';
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
 * the watchdog (NoProgress).
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
    const total = spec.trainer.totalTrainingSteps;
    const cadence = new ProgressCadence(
      beat.step > startStep,
      async () => (deps.stopAtCheckpointPending ? deps.stopAtCheckpointPending(workflowId) : true),
      deps.checkpointSignalIntervalMs,
    );
    let spaceChecked = false;
    let endDelays: (() => number) | undefined;
    const wantWorkers = workerNodes(spec);
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
    if ((spec.trainer.loggers as string[] | undefined)?.includes('file')) {
      // verl 0.6 opens the file logger's path without creating its directory.
      await mkdir(checkpointDir, { recursive: true });
      env['VERL_FILE_LOGGER_PATH'] = metricsPath(checkpointDir);
    }
    Object.assign(env, wandbJobEnv(spec, input.wandb ?? { workflowId }));
    // The key from the worker's environment (local); on kuberay a Secret in kuberay.head.env holds it.
    if (env.WANDB_RUN_ID && spec.backend === 'local' && process.env.WANDB_API_KEY)
      env.WANDB_API_KEY = process.env.WANDB_API_KEY;
    await dashboard.submitJob(id, shellQuote(argv), env);
    const poll = async (): Promise<TrainResult> => {
      for (;;) {
        const { job } = await readJob(id).catch(async (err: unknown) => {
          // The head not answering may mean the cluster itself is gone (deleted by someone else):
          // say so and stop, rather than retry against a cluster that will not come back.
          const status = await backend.describeCluster(handle);
          if (status.phase === 'gone' || status.phase === 'failed') {
            throw permanent(
              ErrorTypes.ClusterLost,
              `cluster ${handle.name} is ${status.phase} during training (at step ${beat.step}, last checkpoint ${beat.lastCheckpointStep}): ${status.message ?? ''}`,
              beat,
            );
          }
          throw err;
        });
        if (!job)
          throw permanent(
            ErrorTypes.ClusterLost,
            `training job ${id} no longer exists on ${handle.name}: the cluster was replaced or lost`,
          );
        const checkpoint = (await readTracker(checkpointDir)) ?? beat.lastCheckpointStep;
        if (summary.lastStep > beat.step || checkpoint > beat.lastCheckpointStep) {
          const newCheckpoint = checkpoint > beat.lastCheckpointStep;
          if (newCheckpoint) await store.save(reader.bytesCopied);
          if (newCheckpoint && !spaceChecked) {
            spaceChecked = true;
            await warnIfCheckpointsWillNotFit(spec, checkpointDir, checkpoint);
          }
          beat.step = Math.max(beat.step, summary.lastStep);
          beat.lastCheckpointStep = checkpoint;
          beat.lastProgressAt = Date.now();
          // The live step is in the heartbeat; signals (history) only as ProgressCadence allows.
          const due = { trained: beat.step > startStep, newCheckpoint, now: beat.lastProgressAt };
          if (await cadence.due(due)) {
            await deps
              .reportProgress(workflowId, { step: beat.step, lastCheckpointStep: beat.lastCheckpointStep })
              .catch(() => undefined);
          }
        }
        if (job.status === 'SUCCEEDED') {
          recordHeartbeat(beat);
          const result = {
            finalStep: summary.lastStep,
            lastCheckpointStep: checkpoint,
            lastMetrics: summary.lastMetrics,
            entrypoint: argv,
          };
          if (summary.earlyStopped.length > 0) {
            return {
              ...result,
              earlyStopped: {
                step: summary.lastStep,
                reasons: summary.earlyStopped.map((k) => k.slice('early_stopped/'.length)),
              },
            };
          }
          if (summary.lastStep < total || checkpoint < total) {
            throw permanent(
              ErrorTypes.TrainingIncomplete,
              `trainer exited 0 at step ${summary.lastStep}/${total} (last checkpoint ${checkpoint}) without an early_stopped/* metric`,
            );
          }
          return result;
        }
        if (job.status === 'FAILED') {
          const failure = classifyJobFailure(job.driverExitCode, failureText(summary));
          const disk =
            failure.type === ErrorTypes.CheckpointDiskFull
              ? `; ${formatGb(await freeBytes(checkpointDir))} free on ${checkpointDir} now`
              : '';
          throw permanent(
            failure.type,
            `training job ${id} failed at step ${beat.step} (last checkpoint ${beat.lastCheckpointStep}): ${failure.reason}${disk}. ${job.message}\n${logTail(summary.tail.join('\n'))}`,
            beat,
          );
        }
        if (job.status === 'STOPPED') {
          throw permanent(
            ErrorTypes.TrainingFailed,
            `training job ${id} was STOPPED at step ${beat.step} (last checkpoint ${beat.lastCheckpointStep}): ${job.message}\n${logTail(summary.tail.join('\n'))}`,
            beat,
          );
        }
        const status = await backend.describeCluster(handle);
        if (status.phase === 'ready' && status.workersAlive < wantWorkers) {
          await dashboard.stopJob(id);
          throw permanent(
            ErrorTypes.ClusterLost,
            `a worker node of ${handle.name} was lost during training (${status.workersAlive}/${wantWorkers} alive) at step ${beat.step}`,
            beat,
          );
        }
        // queued: Kueue took the cluster back (preemption); its pods are gone.
        if (status.phase === 'gone' || status.phase === 'failed' || status.phase === 'queued') {
          throw permanent(
            ErrorTypes.ClusterLost,
            `cluster ${handle.name} is ${status.phase} during training: ${status.message ?? ''}`,
            beat,
          );
        }
        const trained = beat.step > startStep;
        const firstStepSeconds = (spec.deadlines.firstStepSeconds as number | undefined) ?? 3600; // absent in specs recorded before it existed
        if (!trained && Date.now() - (beat.submittedAt ?? beat.lastProgressAt) > firstStepSeconds * 1000) {
          await dashboard.stopJob(id);
          throw permanent(
            ErrorTypes.NoProgress,
            `no training step within deadlines.firstStepSeconds=${firstStepSeconds} s of the submission (model download, worker setup, initial validation); the job was stopped`,
            beat,
          );
        }
        if (trained && Date.now() - beat.lastProgressAt > spec.deadlines.noProgressSeconds * 1000) {
          await dashboard.stopJob(id);
          throw permanent(
            ErrorTypes.NoProgress,
            `no new step or checkpoint for deadlines.noProgressSeconds=${spec.deadlines.noProgressSeconds} s (stuck at step ${beat.step}); the job was stopped`,
            beat,
          );
        }
        // After the last step the job only saves and exits: its end is seen within a quarter second.
        if (summary.lastStep >= total) endDelays ??= pollDelays(deps.pollIntervalMs);
        await heartbeatAndWait(beat, endDelays ? endDelays() : deps.pollIntervalMs);
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
