import { ApplicationFailure, CancellationScope, condition, getExternalWorkflowHandle, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
import type { JoinResult } from '../activities/join.js';
import { stepOfCheckpointPath } from '../spec/campaign.js';
import type { ClusterHandle } from '../spec/cluster.js';
import { trainArgv, type ResumeFrom } from '../spec/entrypoint.js';
import { ErrorTypes } from '../spec/error-types.js';
import type { ExperimentInput, ExperimentResult, ExperimentStatus } from '../spec/experiment-input.js';
import type { ManifestDraft } from '../spec/manifest.js';
import { clusterName } from '../spec/naming.js';
import type { AllReduceResult, Outcome, PreflightCheck, StageName, StageRecord, ValidationResult } from '../spec/results.js';
import { workflowNowIso } from './clock.js';
import { awaitAdmission } from './admission.js';
import { withDeadline } from './deadline.js';
import {
  joinedWorkersQuery,
  lastCheckpointQuery,
  lastStepQuery,
  progressSignal,
  stageQuery,
  statusQuery,
  stopAtNextCheckpointSignal,
} from './definitions.js';
import { failureMessage, failureType, outcomeOf } from './failure-info.js';
import { cleanup, longRunning, polling, quick } from './policies.js';

/** Failures during join that a fresh cluster can fix: the whole cluster is resubmitted. */
const RESUBMITTABLE: ReadonlySet<string> = new Set([ErrorTypes.JoinDeadlineExceeded, ErrorTypes.AllReduceFailed, ErrorTypes.ClusterLost]);

/**
 * One experiment: preflight, verify, submit, join (+ all-reduce), train, validate, archive,
 * teardown, in order. Teardown runs in a non-cancellable scope on success, failure and cancel;
 * training, validation, archive and teardown outcomes are recorded separately. Deadlines (join,
 * whole run) are durable timers; the no-progress watchdog lives in the train activity.
 * Queries: status, stage, joinedWorkers, lastStep, lastCheckpoint. Cancel is graceful: the job
 * stops, checkpoints stay, the manifest records what exists, the cluster is deleted.
 * Signal `stopAtNextCheckpoint` (a campaign's pause): training stops once a checkpoint newer than
 * the one at signal time exists, validation is skipped, and the run ends `paused` after teardown.
 * A child of a campaign forwards its progress signals to the parent, so the campaign's query is live.
 */
export async function experiment(input: ExperimentInput): Promise<ExperimentResult> {
  const { spec } = input;
  const info = workflowInfo();
  const checkpointDir = input.checkpointDir ?? `${spec.storage.checkpointDir}/${spec.name}/${info.workflowId}`;
  const runDir = `${spec.storage.archiveDir}/${spec.name}/${info.workflowId}`;
  const resumedStep = stepOfCheckpointPath(input.resumeFrom);
  const status: ExperimentStatus = { stage: 'preflight', attempt: 0, joinedWorkers: 0, gpusRegistered: 0, lastStep: resumedStep, lastCheckpointStep: resumedStep };
  const parent = info.parent ? getExternalWorkflowHandle(info.parent.workflowId) : undefined;
  setHandler(progressSignal, (p) => {
    if (p.joinedWorkers !== undefined) status.joinedWorkers = p.joinedWorkers;
    if (p.gpusRegistered !== undefined) status.gpusRegistered = p.gpusRegistered;
    if (p.step !== undefined) status.lastStep = Math.max(status.lastStep, p.step);
    const newCheckpoint = p.lastCheckpointStep !== undefined && p.lastCheckpointStep > status.lastCheckpointStep;
    if (p.lastCheckpointStep !== undefined) status.lastCheckpointStep = Math.max(status.lastCheckpointStep, p.lastCheckpointStep);
    // Only new checkpoints reach the parent: each signal is history there, and a campaign can only
    // continue-as-new between attempts. A lost signal is harmless (the query is informational).
    if (parent && newCheckpoint) {
      parent.signal(progressSignal, { step: status.lastStep, lastCheckpointStep: status.lastCheckpointStep }).catch(() => undefined);
    }
  });
  /** Checkpoint step current when a pause was asked for: training stops at the first one above it. */
  let stopAfterCheckpoint: number | undefined;
  let pausedAtCheckpoint = false;
  setHandler(stopAtNextCheckpointSignal, () => {
    stopAfterCheckpoint ??= status.lastCheckpointStep;
  });
  setHandler(statusQuery, () => status);
  setHandler(stageQuery, () => status.stage);
  setHandler(joinedWorkersQuery, () => status.joinedWorkers);
  setHandler(lastStepQuery, () => status.lastStep);
  setHandler(lastCheckpointQuery, () => status.lastCheckpointStep);

  const stages: StageRecord[] = [];
  async function stage<T>(name: StageName, fn: () => Promise<T>): Promise<T> {
    status.stage = name;
    const record: StageRecord = { stage: name, attempt: status.attempt, startedAt: workflowNowIso() };
    stages.push(record);
    try {
      const value = await fn();
      record.outcome = 'succeeded';
      return value;
    } catch (err) {
      record.outcome = outcomeOf(err);
      record.error = failureMessage(err);
      throw err;
    } finally {
      record.endedAt = workflowNowIso();
    }
  }

  const resume: ResumeFrom = input.resumeFrom ? { mode: 'resume_path', path: input.resumeFrom } : { mode: 'disable' };
  let handle: ClusterHandle | undefined;
  let preflightChecks: PreflightCheck[] = [];
  let verified: Awaited<ReturnType<typeof quick.verify>> | undefined;
  let joined: JoinResult | undefined;
  let allReduce: AllReduceResult | undefined;
  let validationResult: ValidationResult | undefined;
  let finalStep: number | undefined;
  let submits = 0;
  const training: Outcome = { outcome: 'skipped' };
  const validation: Outcome = { outcome: 'skipped' };
  const archived: Outcome & { manifestPath?: string } = { outcome: 'skipped' };
  const teardownOutcome: Outcome = { outcome: 'skipped' };
  let failure: unknown;

  async function removeCluster(): Promise<void> {
    if (!handle) return;
    const target = handle;
    await CancellationScope.nonCancellable(() => stage('teardown', () => cleanup.teardown({ handle: target })));
    handle = undefined;
  }

  async function pipeline(): Promise<void> {
    preflightChecks = (await stage('preflight', () => quick.preflight({ spec }))).checks;
    verified = await stage('verify', () => quick.verify({ spec }));
    for (;;) {
      const name = clusterName(spec.name, info.workflowId, status.attempt);
      const owner = { experiment: spec.name, workflowId: info.workflowId, runId: info.runId, attempt: status.attempt };
      // Known before the create returns, so teardown can delete by name whatever a failed create left.
      handle = { backend: spec.backend, name, owner };
      handle = await stage('submit', () => quick.submitCluster({ spec, name, owner }));
      submits++;
      const cluster = handle;
      try {
        joined = await stage('join', async () => {
          if (spec.kuberay?.queueName) await awaitAdmission(spec, cluster);
          const r = await withDeadline(spec.deadlines.joinSeconds * 1000, () => polling.awaitJoin({ spec, handle: cluster }));
          if (r.timedOut) {
            throw ApplicationFailure.create({
              type: ErrorTypes.JoinDeadlineExceeded,
              nonRetryable: true,
              message: `workers did not join within ${spec.deadlines.joinSeconds} s (deadlines.joinSeconds): ${status.joinedWorkers} joined, ${status.gpusRegistered} GPUs registered`,
            });
          }
          // The local backend shares the worker's file system by construction; a KubeRay one must prove it.
          if (spec.backend === 'kuberay') await polling.proveSharedStorage({ spec, handle: cluster, runDir });
          allReduce = await polling.allReduceCheck({ spec, handle: cluster, runDir });
          return r.value;
        });
        break;
      } catch (err) {
        const type = failureType(err) ?? '';
        if (!RESUBMITTABLE.has(type) || status.attempt >= spec.join.maxResubmits) throw err;
        await removeCluster(); // a fresh cluster under the next attempt's name
        status.attempt++;
      }
    }
    const cluster = handle;
    if (stopAfterCheckpoint !== undefined) {
      // Paused before training started: nothing to wait for, free the cluster now.
      pausedAtCheckpoint = true;
      training.error = 'paused before training started';
      return;
    }
    const trainScope = new CancellationScope();
    const pauseWatch = new CancellationScope();
    pauseWatch
      .run(() => condition(() => stopAfterCheckpoint !== undefined && status.lastCheckpointStep > stopAfterCheckpoint))
      .then(() => {
        pausedAtCheckpoint = true;
        trainScope.cancel(); // the train activity stops the Ray job; the checkpoint is complete already
      })
      .catch(() => undefined);
    try {
      const result = await trainScope.run(() => stage('train', () => longRunning.train({ spec, handle: cluster, checkpointDir, resume })));
      finalStep = result.finalStep;
      training.outcome = 'succeeded';
    } catch (err) {
      if (pausedAtCheckpoint && isCancellation(err)) {
        Object.assign(training, { outcome: 'cancelled', error: `paused after checkpoint ${status.lastCheckpointStep}` });
        return;
      }
      Object.assign(training, { outcome: outcomeOf(err), error: failureMessage(err) });
      throw err;
    } finally {
      pauseWatch.cancel();
    }
    try {
      const checkpointPath = `${checkpointDir}/global_step_${finalStep}`;
      validationResult = await stage('validate', () => polling.validate({ spec, handle: cluster, checkpointPath, outPath: `${runDir}/validation.json` }));
      validation.outcome = 'succeeded';
    } catch (err) {
      Object.assign(validation, { outcome: outcomeOf(err), error: failureMessage(err) });
      throw err;
    }
  }

  try {
    const run = await withDeadline(spec.deadlines.runSeconds * 1000, pipeline);
    if (run.timedOut) {
      throw ApplicationFailure.create({ type: ErrorTypes.RunDeadlineExceeded, nonRetryable: true, message: `the run exceeded deadlines.runSeconds=${spec.deadlines.runSeconds}` });
    }
  } catch (err) {
    failure = err;
  }

  const outcome: ExperimentResult['outcome'] = failure !== undefined ? outcomeOf(failure) : pausedAtCheckpoint ? 'paused' : 'succeeded';
  // Archive whenever anything ran past preflight; on cancel too ("archive what exists").
  if (verified) {
    const draft = buildDraft();
    try {
      const written = await CancellationScope.nonCancellable(() => stage('archive', () => quick.archive({ draft, archiveDir: spec.storage.archiveDir })));
      Object.assign(archived, { outcome: 'succeeded', manifestPath: written.manifestPath });
    } catch (err) {
      Object.assign(archived, { outcome: 'failed', error: failureMessage(err) });
    }
  }
  try {
    if (handle) {
      await removeCluster();
      teardownOutcome.outcome = 'succeeded';
    }
  } catch (err) {
    Object.assign(teardownOutcome, { outcome: 'failed', error: failureMessage(err) });
  }
  status.stage = 'done';

  const result: ExperimentResult = {
    outcome,
    training: { ...training, finalStep },
    validation: { ...validation, successRate: validationResult?.success_rate },
    archive: archived,
    teardown: teardownOutcome,
    stages,
    checkpointDir,
    submits,
  };
  if (failure === undefined) return result;
  if (isCancellation(failure)) throw failure; // the workflow ends as cancelled, after cleanup
  throw ApplicationFailure.create({ type: failureType(failure) ?? 'ExperimentFailed', message: failureMessage(failure), nonRetryable: true, details: [result] });

  function buildDraft(): ManifestDraft {
    return {
      experiment: spec.name,
      temporal: { workflowId: info.workflowId, runId: info.runId, namespace: info.namespace, taskQueue: info.taskQueue },
      provenance: input.provenance,
      image: verified?.image ?? { verified: false, note: 'verify did not run' },
      rayVersion: { declared: spec.rayVersion, planned: verified?.plannedRayVersion, observedOnHead: joined?.headRayVersion },
      environment: { envTag: 'CoordSokoban', overrides: spec.trainer.overrides },
      seeds: { train: spec.trainer.seedTrain, val: spec.validation.seed },
      resolvedSpec: spec,
      entrypoint: trainArgv(spec, checkpointDir, resume),
      cluster: {
        backend: spec.backend,
        handle,
        shape: { headCpus: spec.cluster.head.cpus, workerGroups: spec.cluster.workerGroups.map((g) => ({ name: g.name, replicas: g.replicas, gpusPerWorker: g.gpusPerWorker })) },
        nodes: joined?.nodes ?? [],
        submits,
      },
      preflight: { checks: preflightChecks, allReduce },
      resumedFrom: input.resumeFrom,
      checkpointDir,
      training: { ...training, finalStep, totalTrainingSteps: spec.trainer.totalTrainingSteps },
      validation: {
        ...validation,
        result: validationResult ? { ...validationResult, records: undefined } : undefined,
        resultsPath: validationResult ? `${runDir}/validation.json` : undefined,
      },
      stages: [...stages, { stage: 'archive', attempt: status.attempt, startedAt: workflowNowIso() }],
      outcome,
    };
  }
}
