import { Context } from '@temporalio/activity';
import type { ClusterHandle } from '../spec/cluster.js';
import { type ResumeFrom, shellQuote, trainArgv } from '../spec/entrypoint.js';
import { ErrorTypes } from '../spec/error-types.js';
import { type ExperimentSpec, workerNodes } from '../spec/experiment.js';
import { submissionId } from '../spec/naming.js';
import { metricsPath } from '../spec/paths.js';
import type { TrainHeartbeat } from '../spec/progress.js';
import { backendOf } from './backend-of.js';
import { readTracker } from './checkpoints.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';
import { heartbeatAndWait, previousDetails, workflowIdOfActivity } from './heartbeat-loop.js';
import { logTail, stoppingJobOnCancel } from './ray-job.js';
import { summarizeTrainLog } from './train-log.js';

const PROGRESS_REPORT_INTERVAL_MS = 10_000;

export interface TrainInput {
  spec: ExperimentSpec;
  handle: ClusterHandle;
  checkpointDir: string;
  resume: ResumeFrom;
}

export interface TrainResult {
  finalStep: number;
  lastCheckpointStep: number;
  lastMetrics: Record<string, number>;
  entrypoint: string[];
}

/**
 * Stage 5. Run the trainer as a Ray job and poll it: progress from its console lines, checkpoint
 * existence from the tracker file, workers from the dashboard. Heartbeat: {step,
 * lastCheckpointStep, submissionId, lastProgressAt}; a retry (new worker) finds the same job by its
 * submission id and keeps the watchdog's clock. Fails permanently on a failed job, an early stop, a
 * lost worker node (ClusterLost) or no new step/checkpoint within deadlines.noProgressSeconds.
 */
export function createTrain(deps: ActivityDeps) {
  return async function train(input: TrainInput): Promise<TrainResult> {
    const { spec, handle, checkpointDir } = input;
    const backend = backendOf(deps, spec.backend);
    const dashboard = deps.rayHead(handle.dashboardUrl ?? '');
    const argv = backend.resolveArgv(trainArgv(spec, checkpointDir, input.resume));
    const id = submissionId(handle.name, 'train');
    const before = previousDetails<TrainHeartbeat>();
    const beat: TrainHeartbeat = before ?? { step: 0, lastCheckpointStep: 0, submissionId: id, lastProgressAt: Date.now() };
    const workflowId = workflowIdOfActivity();
    const total = spec.trainer.totalTrainingSteps;
    let lastReportAt = 0;
    const wantWorkers = workerNodes(spec);
    const readJob = async (submission: string) => {
      const job = await dashboard.job(submission);
      return { job, logs: job ? await dashboard.jobLogs(submission) : '' };
    };
    await dashboard.submitJob(id, shellQuote(argv), { VERL_FILE_LOGGER_PATH: metricsPath(checkpointDir) });
    return stoppingJobOnCancel(dashboard, id, async () => {
      for (;;) {
        const { job, logs } = await readJob(id).catch(async (err: unknown) => {
          // The head not answering may mean the cluster itself is gone (deleted by someone else):
          // say so and stop, rather than retry against a cluster that will not come back.
          const status = await backend.describeCluster(handle);
          if (status.phase === 'gone' || status.phase === 'failed') {
            throw permanent(ErrorTypes.ClusterLost, `cluster ${handle.name} is ${status.phase} during training (at step ${beat.step}, last checkpoint ${beat.lastCheckpointStep}): ${status.message ?? ''}`, beat);
          }
          throw err;
        });
        if (!job) throw permanent(ErrorTypes.ClusterLost, `training job ${id} no longer exists on ${handle.name}: the cluster was replaced or lost`);
        const summary = summarizeTrainLog(logs);
        const checkpoint = (await readTracker(checkpointDir)) ?? beat.lastCheckpointStep;
        if (summary.lastStep > beat.step || checkpoint > beat.lastCheckpointStep) {
          const newCheckpoint = checkpoint > beat.lastCheckpointStep;
          beat.step = Math.max(beat.step, summary.lastStep);
          beat.lastCheckpointStep = checkpoint;
          beat.lastProgressAt = Date.now();
          // Each signal is a history event: report every checkpoint, steps at most every 10 s,
          // so a week-long run keeps a small history.
          if (newCheckpoint || beat.lastProgressAt - lastReportAt >= PROGRESS_REPORT_INTERVAL_MS) {
            lastReportAt = beat.lastProgressAt;
            await deps.reportProgress(workflowId, { step: beat.step, lastCheckpointStep: beat.lastCheckpointStep }).catch(() => undefined);
          }
        }
        if (job.status === 'SUCCEEDED') {
          if (summary.earlyStopped.length > 0 || summary.lastStep < total || checkpoint < total) {
            throw permanent(ErrorTypes.TrainingIncomplete, `trainer exited 0 at step ${summary.lastStep}/${total} (last checkpoint ${checkpoint}${summary.earlyStopped.length ? `, early stop: ${summary.earlyStopped.join(', ')}` : ''})`);
          }
          Context.current().heartbeat(beat);
          return { finalStep: summary.lastStep, lastCheckpointStep: checkpoint, lastMetrics: summary.lastMetrics, entrypoint: argv };
        }
        if (job.status === 'FAILED' || job.status === 'STOPPED') {
          throw permanent(ErrorTypes.TrainingFailed, `training job ${id} ${job.status} at step ${beat.step} (last checkpoint ${beat.lastCheckpointStep}): ${job.message}\n${logTail(logs)}`, beat);
        }
        const status = await backend.describeCluster(handle);
        if (status.phase === 'ready' && status.workersAlive < wantWorkers) {
          await dashboard.stopJob(id);
          throw permanent(ErrorTypes.ClusterLost, `a worker node of ${handle.name} was lost during training (${status.workersAlive}/${wantWorkers} alive) at step ${beat.step}`, beat);
        }
        if (status.phase === 'gone' || status.phase === 'failed') {
          throw permanent(ErrorTypes.ClusterLost, `cluster ${handle.name} is ${status.phase} during training: ${status.message ?? ''}`, beat);
        }
        if (Date.now() - beat.lastProgressAt > spec.deadlines.noProgressSeconds * 1000) {
          await dashboard.stopJob(id);
          throw permanent(ErrorTypes.NoProgress, `no new step or checkpoint for ${spec.deadlines.noProgressSeconds} s (stuck at step ${beat.step}); the job was stopped`, beat);
        }
        await heartbeatAndWait(beat, deps.pollIntervalMs);
      }
    });
  };
}
