import {
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { stepOfCheckpointPath } from '../domain/campaign/campaign.js';
import { environmentOfFailureDetails } from '../domain/join/environment-probe.js';
import { resubmitsCluster } from '../domain/failures/catalogue.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import type { ExperimentInput, ExperimentResult } from '../domain/run/experiment-input.js';
import { clusterName } from '../domain/spec/naming.js';
import { checkpointPath, ledgerPath, validationResultsPath } from '../domain/spec/paths.js';
import type { AllReduceResult, StageName, StageOutcome, StageRecord } from '../domain/run/results.js';
import type { HashCheckpointsResult } from '../activities/checkpoints/hash-checkpoints.js';
import type { ClusterHandle } from '../domain/cluster/cluster.js';
import { workflowNowIso } from './clock.js';
import { waitForAdmission } from './admission.js';
import { withDeadline } from './deadline.js';
import {
  lastStepQuery,
  pruneSignal,
  stageQuery,
  stopAtCheckpointPendingQuery,
  stopAtNextCheckpointSignal,
} from './experiment-definitions.js';
import { progressSignal, statusQuery } from './shared-definitions.js';
import { intermediateResultSignal } from './sweep-definitions.js';
import {
  type ExperimentRun,
  buildManifestDraft,
  experimentResult,
  newExperimentRun,
} from './experiment-run.js';
import { ExperimentVisibility } from './experiment-visibility.js';
import { outcomeOf, unwrapFailure } from './failure-info.js';
import { logStage } from './stage-log.js';
import {
  HASHING_DURING_TEARDOWN,
  KUEUE_QUEUED_STAGE,
  STORAGE_PROOF_ALONGSIDE_CHECKS,
  TEAM_BUDGET,
} from './patches.js';
import { reserveRunBudget, settleRunBudget } from './budget.js';
import { notifyTargets } from './notify.js';
import { notifyScheduleWillPause } from './schedule-pause.js';
import { trackExperiment, wandbIds } from './tracking.js';
import { progressFromTrainResult } from './train-progress.js';
import {
  allReduceCheck,
  archive,
  awaitJoin,
  hashCheckpoints,
  preflight,
  proveSharedStorage,
  submitCluster,
  teardown,
  train,
  validate,
  verify,
} from './policies.js';

/**
 * One experiment: preflight, verify, submit, join (+ all-reduce), train, validate, teardown,
 * archive, in order. Teardown runs in a non-cancellable scope on success, failure and cancel;
 * training, validation, archive and teardown outcomes are recorded separately. Deadlines (join,
 * whole run) are durable timers; the no-progress watchdog lives in the train activity.
 * Queries: status, stage, lastStep. Cancel is graceful: the job stops, checkpoints stay, the
 * manifest records what exists, the cluster is deleted.
 * Signal `stopAtNextCheckpoint` (a campaign's pause): training stops once a checkpoint newer than
 * the one at signal time exists, validation is skipped, and the run ends `paused` after teardown.
 * A child of a campaign forwards its progress signals to the parent, so the campaign's query is live.
 */
export async function experiment(input: ExperimentInput): Promise<ExperimentResult> {
  const run = newExperimentRun(input, workflowInfo());
  run.visible = new ExperimentVisibility(run);
  answerQueriesAndSignals(run);
  // Budgets: preflight, then the reservation, before the run deadline starts (a queued run's wait
  // is not its run time, as a Kueue admission is not counted against the join).
  const budgeted = patched(TEAM_BUDGET);
  if (budgeted) await reserveAfterPreflight(run);
  if (run.failure === undefined)
    await withinRunDeadline(run, async () => {
      if (!budgeted) await preflightStage(run);
      await verifyStage(run);
      await provisionCluster(run);
      if (await trainStage(run)) await validateStage(run);
    });
  // Hashing and archiving read shared storage only: the cluster (its GPUs) is freed first, and
  // hashing runs meanwhile when no trainer can still be writing.
  const hashWhileTearingDown = mayHashDuringTeardown(run);
  const tearingDown = teardownStage(run);
  const hashing = hashWhileTearingDown ? hashRunCheckpoints(run) : undefined;
  hashing?.catch(() => undefined); // awaited by the archive stage, which records a failure
  await tearingDown;
  await settleRunBudget(run);
  await archiveStage(run, hashing);
  markDone(run);
  // After teardown: a slow or unreachable tracker never keeps a cluster (and its GPUs) waiting.
  run.tracking = await trackExperiment(run.input.spec.tracking?.mlflow, run.archive.manifestPath);
  // A campaign's attempt or a sweep's child: the parent tells how the whole thing ended.
  if (!workflowInfo().parent) await notifyEnding(run);
  return finish(run);
}

function answerQueriesAndSignals(run: ExperimentRun): void {
  const { status } = run;
  const parentId = workflowInfo().parent?.workflowId;
  const parent = parentId ? getExternalWorkflowHandle(parentId) : undefined;
  setHandler(progressSignal, (p) => {
    if (p.joinedWorkers !== undefined) status.joinedWorkers = p.joinedWorkers;
    if (p.gpusRegistered !== undefined) status.gpusRegistered = p.gpusRegistered;
    if (p.waiting !== undefined) status.joinWaiting = p.waiting || undefined;
    // Only the admission wait sends it (0 once admitted): state for the status query, no command.
    if (p.queuePosition !== undefined) status.queuePosition = p.queuePosition || undefined;
    if (p.step !== undefined) status.lastStep = Math.max(status.lastStep, p.step);
    const newCheckpoint =
      p.lastCheckpointStep !== undefined && p.lastCheckpointStep > status.lastCheckpointStep;
    if (p.lastCheckpointStep !== undefined)
      status.lastCheckpointStep = Math.max(status.lastCheckpointStep, p.lastCheckpointStep);
    run.visible?.progressed(newCheckpoint);
    // Only new checkpoints reach the parent: each signal is history there, and a campaign can only
    // continue-as-new between attempts. A lost signal is harmless (the query is informational).
    if (parent && newCheckpoint) {
      parent
        .signal(progressSignal, { step: status.lastStep, lastCheckpointStep: status.lastCheckpointStep })
        .catch(() => undefined);
    }
    // A sweep with a scheduler asked for each in-loop validation: one signal per validation.
    if (parent && p.validation && run.input.reportValidations) {
      parent
        .signal(intermediateResultSignal, { workflowId: run.ids.workflowId, ...p.validation })
        .catch(() => undefined);
    }
  });
  setHandler(pruneSignal, (why) => {
    run.stopRequest ??= why;
  });
  setHandler(stopAtNextCheckpointSignal, () => {
    run.stopAfterCheckpoint ??= status.lastCheckpointStep;
  });
  setHandler(statusQuery, () => ({ kind: 'experiment', ...status }));
  setHandler(stageQuery, () => status.stage);
  setHandler(lastStepQuery, () => status.lastStep);
  setHandler(stopAtCheckpointPendingQuery, () => run.stopAfterCheckpoint !== undefined);
}

/** Run `fn` under one stage record (start, end, outcome, error); the status query shows the stage. */
async function stage<T>(run: ExperimentRun, name: StageName, fn: () => Promise<T>): Promise<T> {
  run.status.stage = name;
  logStage(name, run.status.attempt);
  run.visible?.stageStarted(name);
  const record: StageRecord = { stage: name, attempt: run.status.attempt, startedAt: workflowNowIso() };
  run.stages.push(record);
  try {
    const value = await fn();
    record.outcome = 'succeeded';
    return value;
  } catch (err) {
    record.outcome = outcomeOf(err);
    record.error = unwrapFailure(err).message;
    throw err;
  } finally {
    record.endedAt = workflowNowIso();
  }
}

/** The pipeline up to validation under deadlines.runSeconds; a failure or cancel is kept in the run. */
async function withinRunDeadline(run: ExperimentRun, pipeline: () => Promise<void>): Promise<void> {
  const { runSeconds } = run.input.spec.deadlines;
  try {
    const r = await withDeadline(runSeconds * 1000, pipeline);
    if (r.timedOut) {
      throw ApplicationFailure.create({
        type: ErrorTypes.RunDeadlineExceeded,
        nonRetryable: true,
        message: `the run exceeded deadlines.runSeconds=${runSeconds}`,
      });
    }
  } catch (err) {
    run.failure = err;
  }
  run.outcome =
    run.failure !== undefined
      ? outcomeOf(run.failure)
      : run.pausedAtCheckpoint
        ? 'paused'
        : run.pruned
          ? 'pruned'
          : run.earlyStopped
            ? 'earlyStopped'
            : 'succeeded';
}

/** Preflight and the budget's reservation; a failure (a refusal) or cancel is kept in the run. */
async function reserveAfterPreflight(run: ExperimentRun): Promise<void> {
  try {
    await preflightStage(run);
    await reserveRunBudget(run);
  } catch (err) {
    run.failure = err;
    run.outcome = outcomeOf(err);
  }
}

async function preflightStage(run: ExperimentRun): Promise<void> {
  run.preflightChecks = (await stage(run, 'preflight', () => preflight({ spec: run.input.spec }))).checks;
}

async function verifyStage(run: ExperimentRun): Promise<void> {
  run.verified = await stage(run, 'verify', () => verify({ spec: run.input.spec }));
}

/** Submit and join (+ all-reduce); a failure a fresh cluster can fix tears down and resubmits. */
async function provisionCluster(run: ExperimentRun): Promise<void> {
  const { spec } = run.input;
  for (;;) {
    const name = clusterName(spec.name, run.ids.workflowId, run.status.attempt);
    const owner = {
      experiment: spec.name,
      workflowId: run.ids.workflowId,
      runId: run.ids.runId,
      attempt: run.status.attempt,
    };
    // Known before the create returns, so teardown can delete by name whatever a failed create left.
    run.handle = { backend: spec.backend, name, owner };
    run.handle = await stage(run, 'submit', () => submitCluster({ spec, name, owner }));
    run.submits++;
    try {
      await joinStage(run);
      return;
    } catch (err) {
      // Which failures a fresh cluster can fix is the catalogue's `resubmit` (src/domain/failures).
      const type = unwrapFailure(err).type ?? '';
      if (!resubmitsCluster(type) || run.status.attempt >= spec.join.maxResubmits) throw err;
      await removeCluster(run); // a fresh cluster under the next attempt's name
      run.status.attempt++;
    }
  }
}

/**
 * Every worker joins within deadlines.joinSeconds (a durable timer), then the all-reduce check.
 * A cluster in a Kueue queue is admitted first, in stage `queued` (before the patch: inside join).
 */
async function joinStage(run: ExperimentRun): Promise<void> {
  const { spec } = run.input;
  const cluster = run.handle!;
  const queuedStage = spec.kuberay?.queueName !== undefined && patched(KUEUE_QUEUED_STAGE);
  if (queuedStage) {
    await stage(run, 'queued', () => waitForAdmission(spec, cluster));
    run.status.queuePosition = undefined;
  }
  run.joined = await stage(run, 'join', async () => {
    if (spec.kuberay?.queueName && !queuedStage) await waitForAdmission(spec, cluster);
    const r = await withDeadline(spec.deadlines.joinSeconds * 1000, () =>
      awaitJoin({ spec, handle: cluster }),
    );
    if (r.timedOut) {
      throw ApplicationFailure.create({
        type: ErrorTypes.JoinDeadlineExceeded,
        nonRetryable: true,
        message: `workers did not join within ${spec.deadlines.joinSeconds} s (deadlines.joinSeconds): ${run.status.joinedWorkers} joined, ${run.status.gpusRegistered} GPUs registered${run.status.joinWaiting ? `; waiting: ${run.status.joinWaiting}` : ''}`,
      });
    }
    // The local backend shares the worker's file system by construction; a KubeRay one must prove it.
    if (spec.backend !== 'kuberay') run.allReduce = await checkAllReduce(run, cluster);
    else if (patched(STORAGE_PROOF_ALONGSIDE_CHECKS))
      run.allReduce = await checkAllReduceProvingStorage(run, cluster);
    else {
      await proveSharedStorage({ spec, handle: cluster, runDir: run.runDir });
      run.allReduce = await checkAllReduce(run, cluster);
    }
    return r.value;
  });
}

/** The environment probe and the all-reduce check (one activity). */
function checkAllReduce(run: ExperimentRun, cluster: ClusterHandle): Promise<AllReduceResult> {
  const { spec } = run.input;
  return allReduceCheck({
    spec,
    handle: cluster,
    runDir: run.runDir,
    checkpointDir: run.checkpointDir,
  }).catch((err: unknown) => {
    // An unmet image contract: its findings go in the manifest too.
    run.failedEnvironmentProbe = environmentOfFailureDetails(unwrapFailure(err).details);
    throw err;
  });
}

/**
 * The storage proof alongside the checks: its Ray tasks take no GPU, so it costs no wait. Storage
 * that is not shared explains whatever the checks then report, so its failure wins and stops them.
 */
async function checkAllReduceProvingStorage(
  run: ExperimentRun,
  cluster: ClusterHandle,
): Promise<AllReduceResult> {
  const checks = new CancellationScope();
  const proof = proveSharedStorage({ spec: run.input.spec, handle: cluster, runDir: run.runDir });
  proof.catch(() => checks.cancel());
  const [proved, checked] = await Promise.allSettled([proof, checks.run(() => checkAllReduce(run, cluster))]);
  if (proved.status === 'rejected') throw proved.reason;
  if (checked.status === 'rejected') throw checked.reason;
  return checked.value;
}

/**
 * Train until done, or until the first checkpoint after a pause was asked for (the train activity
 * is cancelled then; the checkpoint is complete already). Returns whether validation should follow.
 */
async function trainStage(run: ExperimentRun): Promise<boolean> {
  const { spec } = run.input;
  const { training } = run;
  if (run.stopAfterCheckpoint !== undefined) {
    // Paused before training started: nothing to wait for, free the cluster now.
    run.pausedAtCheckpoint = true;
    training.error = 'paused before training started';
    return false;
  }
  const cluster = run.handle!;
  const trainScope = new CancellationScope();
  const pauseWatch = new CancellationScope();
  pauseWatch
    .run(() =>
      condition(
        () =>
          (run.stopAfterCheckpoint !== undefined &&
            run.status.lastCheckpointStep > run.stopAfterCheckpoint) ||
          run.stopRequest !== undefined,
      ),
    )
    .then(() => {
      // A sweep's scheduler stops at once: the rung's checkpoint (if any) is on disk already.
      if (run.stopRequest !== undefined) run.pruned = run.stopRequest;
      else run.pausedAtCheckpoint = true;
      trainScope.cancel();
    })
    .catch(() => undefined);
  try {
    const resumedStep = stepOfCheckpointPath(run.input.resumeFrom);
    if (resumedStep >= spec.trainer.totalTrainingSteps) {
      // The checkpoint already holds every step (a finished run resumed): train nothing more.
      run.finalStep = resumedStep;
      training.error = `resumed from step ${resumedStep}, at or past trainer.totalTrainingSteps=${spec.trainer.totalTrainingSteps}: no training job`;
      return true;
    }
    const result = await trainScope.run(() =>
      stage(run, 'train', () =>
        train({
          spec,
          handle: cluster,
          checkpointDir: run.checkpointDir,
          resume: run.resume,
          ...wandbIds(run.input),
          ...(run.input.reportValidations ? { reportValidations: true } : {}),
          ...(run.input.reportSteps ? { reportSteps: run.input.reportSteps } : {}),
        }),
      ),
    );
    run.finalStep = result.finalStep;
    progressFromTrainResult(run, result);
    run.earlyStopped = result.earlyStopped;
    training.outcome = result.earlyStopped ? 'earlyStopped' : 'succeeded';
    if (result.earlyStopped) {
      // RAGEN stopped on purpose (no final save): nothing to validate as the run's result.
      training.error = `early stop at step ${result.earlyStopped.step}: ${result.earlyStopped.reasons.join(', ')}`;
      return false;
    }
    return true;
  } catch (err) {
    if (run.pruned && isCancellation(err)) {
      Object.assign(training, {
        outcome: 'cancelled',
        error: `stopped early at step ${run.status.lastStep} (rung ${run.pruned.rung}): ${run.pruned.reason}`,
      });
      return false;
    }
    if (run.pausedAtCheckpoint && isCancellation(err)) {
      Object.assign(training, {
        outcome: 'cancelled',
        error: `paused after checkpoint ${run.status.lastCheckpointStep}`,
      });
      return false;
    }
    Object.assign(training, { outcome: outcomeOf(err), error: unwrapFailure(err).message });
    throw err;
  } finally {
    pauseWatch.cancel();
  }
}

async function validateStage(run: ExperimentRun): Promise<void> {
  const { spec } = run.input;
  const cluster = run.handle!;
  try {
    // A run resumed at its last step trained nothing: validate the checkpoint it resumed from.
    const checkpoint =
      run.training.outcome === 'skipped' && run.input.resumeFrom
        ? run.input.resumeFrom
        : checkpointPath(run.checkpointDir, run.finalStep ?? 0);
    const outPath = validationResultsPath(run.runDir);
    run.validationResult = await stage(run, 'validate', () =>
      validate({ spec, handle: cluster, checkpointPath: checkpoint, outPath }),
    );
    run.validation.outcome = 'succeeded';
  } catch (err) {
    Object.assign(run.validation, { outcome: outcomeOf(err), error: unwrapFailure(err).message });
    throw err;
  }
}

/** Training outcomes after which no trainer job of this run is left writing checkpoints. */
const TRAINER_ENDED: ReadonlySet<StageOutcome> = new Set(['succeeded', 'earlyStopped', 'skipped']);

/** Hashing is its own long-running activity; the archive reuses the ledger's hashes. Never cancelled. */
function hashRunCheckpoints(run: ExperimentRun): Promise<HashCheckpointsResult> {
  const { archiveDir } = run.input.spec.storage;
  const ledger = run.input.ledgerPath ?? ledgerPath(archiveDir, run.input.spec.name, run.ids.workflowId);
  return CancellationScope.nonCancellable(() =>
    hashCheckpoints({ checkpointDir: run.checkpointDir, ledgerPath: ledger, now: workflowNowIso() }),
  );
}

/**
 * Whether hashing starts with teardown: there is an archive to write and the trainer's job ended by
 * itself or never ran (a stopped job may still be writing its last checkpoint: hash after teardown).
 */
function mayHashDuringTeardown(run: ExperimentRun): boolean {
  if (!run.verified || !run.handle || !TRAINER_ENDED.has(run.training.outcome)) return false;
  return patched(HASHING_DURING_TEARDOWN);
}

/** Archive whenever anything ran past preflight; on cancel too ("archive what exists"). */
async function archiveStage(run: ExperimentRun, hashing?: Promise<HashCheckpointsResult>): Promise<void> {
  if (!run.verified) return;
  const { archiveDir } = run.input.spec.storage;
  try {
    const written = await CancellationScope.nonCancellable(() =>
      stage(run, 'archive', async () => {
        const { checkpoints } = await (hashing ?? hashRunCheckpoints(run));
        return archive({ draft: buildManifestDraft(run), archiveDir, checkpoints });
      }),
    );
    Object.assign(run.archive, { outcome: 'succeeded', manifestPath: written.manifestPath });
  } catch (err) {
    Object.assign(run.archive, { outcome: 'failed', error: unwrapFailure(err).message });
  }
}

async function teardownStage(run: ExperimentRun): Promise<void> {
  try {
    if (run.handle) {
      await removeCluster(run);
      run.teardown.outcome = 'succeeded';
    }
  } catch (err) {
    Object.assign(run.teardown, { outcome: 'failed', error: unwrapFailure(err).message });
  }
}

function markDone(run: ExperimentRun): void {
  run.status.stage = 'done';
  logStage('done', run.status.attempt, { outcome: run.outcome });
  run.visible?.stageStarted('done'); // batched with the workflow's completion
}

async function notifyEnding(run: ExperimentRun): Promise<void> {
  const outcome = run.outcome ?? 'failed';
  // Stopped by a sweep's scheduler: only a sweep's child ends so, and the sweep tells.
  if (outcome === 'pruned') return;
  const reason = run.failure !== undefined ? unwrapFailure(run.failure).message : run.training.error;
  const { name, notify } = run.input.spec;
  await notifyTargets(
    notify,
    { kind: 'experiment', name, reason, manifestPath: run.archive.manifestPath },
    outcome,
  );
  // The run fails (see finish): a schedule that started it pauses on that.
  if (run.failure !== undefined && !isCancellation(run.failure))
    await notifyScheduleWillPause(notify, name, reason);
}

/** Teardown, never cancelled (the user's cancel must not leave a cluster behind). */
async function removeCluster(run: ExperimentRun): Promise<void> {
  if (!run.handle) return;
  const handle = run.handle;
  await CancellationScope.nonCancellable(() => stage(run, 'teardown', () => teardown({ handle })));
  run.handle = undefined;
}

/** The result, or the failure that carries it; a cancelled run ends as cancelled, after cleanup. */
function finish(run: ExperimentRun): ExperimentResult {
  const result = experimentResult(run);
  if (run.failure === undefined) return result;
  if (isCancellation(run.failure)) throw run.failure;
  const { type, message } = unwrapFailure(run.failure);
  throw ApplicationFailure.create({
    type: type ?? 'ExperimentFailed',
    message,
    nonRetryable: true,
    details: [result],
  });
}
