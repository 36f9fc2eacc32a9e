import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  type ChildWorkflowHandle,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  AttemptEnd,
  AttemptRecord,
  CampaignInput,
  CampaignResult,
  CampaignState,
  LatestCheckpoint,
} from '../spec/campaign.js';
import { ErrorTypes } from '../spec/error-types.js';
import type { ExperimentResult } from '../spec/experiment-input.js';
import { workerGpus } from '../spec/experiment.js';
import { extendSignal, pauseSignal, progressQuery, resumeSignal } from './campaign-definitions.js';
import { secondsBetween, workflowNowIso } from './clock.js';
import { progressSignal, stopAtNextCheckpointSignal } from './definitions.js';
import type { experiment } from './experiment.js';
import { failureMessage, failureType } from './failure-info.js';
import { quick } from './policies.js';

/** Failures another attempt cannot fix (bad input, storage, versions): the campaign fails at once. */
const FATAL: ReadonlySet<string> = new Set([
  ErrorTypes.InvalidSpec,
  ErrorTypes.StorageNotWritable,
  ErrorTypes.PreflightFailed,
  ErrorTypes.RayVersionMismatch,
  ErrorTypes.ImageNotVerified,
  ErrorTypes.ManifestExists,
  ErrorTypes.ProbeUnavailable,
]);

/**
 * A training campaign: attempts, each a child `experiment` workflow (`<campaign id>-a<n>`) that runs
 * every stage. After a failed attempt the next one resumes explicitly (resume_path) from the latest
 * COMPLETE checkpoint in the campaign's shared checkpoint dir (tracker + ledger hashes, see the
 * latestCompleteCheckpoint activity). Budgets: maxAttempts, maxAttemptsWithoutNewCheckpoint.
 * Continue-as-new between attempts past budgets.historyEventsBeforeContinueAsNew, carrying lineage.
 * Signals: pause (stop after the next checkpoint, tear down, wait), resume, extend(steps).
 * Cancel (workflow cancellation) is graceful: the child archives what exists and tears down.
 * Query: progress. The campaign manifest links every attempt's manifest; it is written once.
 */
export async function campaign(input: CampaignInput): Promise<CampaignResult> {
  const { spec, budgets } = input;
  const info = workflowInfo();
  const checkpointDir = `${spec.storage.checkpointDir}/${spec.name}/${info.workflowId}`;
  const campaignDir = `${spec.storage.archiveDir}/${spec.name}/${info.workflowId}`;
  const ledgerPath = `${campaignDir}/checkpoints.json`;
  const gpus = workerGpus(spec);
  const state: CampaignState = input.state ?? {
    attempts: [],
    totalTrainingSteps: spec.trainer.totalTrainingSteps,
    paused: false,
    attemptsWithoutNewCheckpoint: 0,
    latestCheckpointStep: 0,
    continuedAsNew: 0,
    historyEventsPerRun: [],
  };
  const live = {
    phase: 'checking' as 'checking' | 'running' | 'paused' | 'done',
    step: state.latestCheckpointStep,
    lastCheckpointStep: state.latestCheckpointStep,
    attemptStartedAt: '',
  };
  let child: ChildWorkflowHandle<typeof experiment> | undefined;

  setHandler(pauseSignal, () => {
    state.paused = true;
    if (child) child.signal(stopAtNextCheckpointSignal).catch(() => undefined);
  });
  setHandler(resumeSignal, () => {
    state.paused = false;
  });
  setHandler(extendSignal, (steps) => {
    if (Number.isInteger(steps) && steps > 0) state.totalTrainingSteps += steps;
  });
  setHandler(progressSignal, (p) => {
    if (p.step !== undefined) live.step = Math.max(live.step, p.step);
    if (p.lastCheckpointStep !== undefined)
      live.lastCheckpointStep = Math.max(live.lastCheckpointStep, p.lastCheckpointStep);
  });
  const usedGpuSeconds = () => state.attempts.reduce((s, a) => s + a.gpuSeconds, 0);
  setHandler(progressQuery, () => ({
    phase: live.phase,
    attempt: state.attempts.length + (live.phase === 'running' ? 1 : 0),
    step: live.step,
    lastCheckpointStep: live.lastCheckpointStep,
    totalTrainingSteps: state.totalTrainingSteps,
    gpuSeconds:
      usedGpuSeconds() +
      (live.phase === 'running' && live.attemptStartedAt
        ? gpus * secondsBetween(live.attemptStartedAt, workflowNowIso())
        : 0),
    paused: state.paused,
    continuedAsNew: state.continuedAsNew,
  }));

  let checkpoints: LatestCheckpoint = { checkpoints: [], untrusted: [] };
  const findLatest = async () => {
    checkpoints = await quick.latestCompleteCheckpoint({ checkpointDir, ledgerPath, now: workflowNowIso() });
    state.latestCheckpointStep = checkpoints.latest?.step ?? 0;
    live.lastCheckpointStep = Math.max(live.lastCheckpointStep, state.latestCheckpointStep);
    return checkpoints.latest;
  };

  let outcome: CampaignResult['outcome'] = 'failed';
  let reason: string | undefined;
  let failure: unknown;
  try {
    for (;;) {
      live.phase = 'checking';
      const latest = await findLatest();
      const last = state.attempts.at(-1);
      if (last?.outcome === 'succeeded' && (last.finalStep ?? 0) >= state.totalTrainingSteps) {
        outcome = 'succeeded';
        break;
      }
      // A pause ends an attempt on purpose: it does not use up the budget.
      if (state.attempts.filter((a) => a.outcome !== 'paused').length >= budgets.maxAttempts) {
        reason = `campaign.maxAttempts=${budgets.maxAttempts} attempts used; the last ended with ${last?.ended.type}: ${last?.ended.message}`;
        throw ApplicationFailure.create({
          type: ErrorTypes.CampaignAttemptsExhausted,
          message: reason,
          nonRetryable: true,
        });
      }
      if (state.attemptsWithoutNewCheckpoint >= budgets.maxAttemptsWithoutNewCheckpoint) {
        reason = `${state.attemptsWithoutNewCheckpoint} attempts in a row ended without a new checkpoint (campaign.maxAttemptsWithoutNewCheckpoint=${budgets.maxAttemptsWithoutNewCheckpoint}); the last ended with ${last?.ended.type}: ${last?.ended.message}`;
        throw ApplicationFailure.create({
          type: ErrorTypes.CampaignStalled,
          message: reason,
          nonRetryable: true,
        });
      }
      if (last && FATAL.has(last.ended.type)) {
        reason = `attempt ${last.attempt} failed with ${last.ended.type}, which another attempt cannot fix: ${last.ended.message}`;
        throw ApplicationFailure.create({ type: last.ended.type, message: reason, nonRetryable: true });
      }
      if (state.paused) {
        live.phase = 'paused';
        await condition(() => !state.paused);
        continue;
      }
      if (
        workflowInfo().historyLength >= budgets.historyEventsBeforeContinueAsNew ||
        workflowInfo().continueAsNewSuggested
      ) {
        state.historyEventsPerRun.push(workflowInfo().historyLength);
        state.continuedAsNew++;
        await continueAsNew<typeof campaign>({ ...input, state });
      }
      await runAttempt(latest);
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    failure = err;
    outcome = isCancellation(err) ? 'cancelled' : 'failed';
    reason ??= isCancellation(err) ? 'cancelled by the user' : failureMessage(err);
  }
  live.phase = 'done';
  state.historyEventsPerRun.push(workflowInfo().historyLength);

  const manifest = await CancellationScope.nonCancellable(async () => {
    await findLatest().catch(() => undefined);
    return quick
      .archiveCampaign({
        archiveDir: spec.storage.archiveDir,
        untrusted: checkpoints.untrusted,
        draft: {
          campaign: info.workflowId,
          experiment: spec.name,
          temporal: {
            workflowId: info.workflowId,
            runId: info.runId,
            namespace: info.namespace,
            taskQueue: info.taskQueue,
          },
          budgets,
          provenance: input.provenance,
          checkpointDir,
          totalTrainingSteps: state.totalTrainingSteps,
          outcome,
          reason,
          attempts: state.attempts,
          gpuSeconds: usedGpuSeconds(),
          continuedAsNew: state.continuedAsNew,
          writtenAt: workflowNowIso(),
          ledgerPath,
        },
      })
      .catch((err: unknown) => {
        reason = `${reason ?? ''}${reason ? '; ' : ''}the campaign manifest could not be written: ${failureMessage(err)}`;
        return undefined;
      });
  });
  const result: CampaignResult = {
    outcome,
    reason,
    attempts: state.attempts,
    finalStep: state.attempts.at(-1)?.finalStep,
    latestCheckpointStep: state.latestCheckpointStep,
    gpuSeconds: usedGpuSeconds(),
    manifestPath: manifest?.manifestPath,
    historyEventsPerRun: state.historyEventsPerRun,
  };
  if (failure === undefined) return result;
  if (isCancellation(failure)) throw failure;
  throw ApplicationFailure.create({
    type: failureType(failure) ?? 'CampaignFailed',
    message: reason ?? failureMessage(failure),
    nonRetryable: true,
    details: [result],
  });

  async function runAttempt(latest: LatestCheckpoint['latest']): Promise<void> {
    const n = state.attempts.length + 1;
    const workflowId = `${info.workflowId}-a${n}`;
    const startedAt = workflowNowIso();
    const stepBefore = latest?.step ?? 0;
    live.phase = 'running';
    live.attemptStartedAt = startedAt;
    live.step = stepBefore;
    const total = state.totalTrainingSteps;
    child = await startChild<typeof experiment>('experiment', {
      workflowId,
      args: [
        {
          spec: { ...spec, trainer: { ...spec.trainer, totalTrainingSteps: total } },
          provenance: input.provenance,
          resumeFrom: latest?.path,
          checkpointDir,
        },
      ],
    });
    if (state.paused) child.signal(stopAtNextCheckpointSignal).catch(() => undefined);
    let result: ExperimentResult | undefined;
    let ended: AttemptEnd;
    let childOutcome: AttemptRecord['outcome'];
    let cancelled: unknown;
    try {
      result = await child.result();
      childOutcome = result.outcome;
      ended = {
        type: result.outcome,
        message:
          result.outcome === 'paused'
            ? (result.training.error ?? 'paused')
            : `step ${result.training.finalStep}`,
      };
    } catch (err) {
      const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
      result = (cause as { details?: unknown[] } | undefined)?.details?.[0] as ExperimentResult | undefined;
      childOutcome = isCancellation(err) ? 'cancelled' : 'failed';
      ended = {
        type: isCancellation(err) ? 'cancelled' : (failureType(cause) ?? 'failed'),
        message: failureMessage(cause),
      };
      if (isCancellation(err)) cancelled = err;
    } finally {
      child = undefined;
    }
    // The campaign's own cancellation must not stop it from recording what the attempt left.
    const after = await CancellationScope.nonCancellable(() => findLatest());
    const endedAt = workflowNowIso();
    const trainSeconds = (result?.stages ?? [])
      .filter((s) => s.stage === 'train')
      .reduce((sum, s) => sum + secondsBetween(s.startedAt, s.endedAt ?? endedAt), 0);
    const record: AttemptRecord = {
      attempt: n,
      workflowId,
      startedFrom: latest?.path,
      startedFromStep: stepBefore,
      previousEnded: state.attempts.at(-1)?.ended,
      totalTrainingSteps: total,
      outcome: childOutcome,
      ended,
      finalStep: result?.training.finalStep,
      checkpointStepAfter: after?.step ?? 0,
      manifestPath:
        result?.archive.manifestPath ?? `${spec.storage.archiveDir}/${spec.name}/${workflowId}/manifest.json`,
      submits: result?.submits,
      gpuSeconds: result ? gpus * trainSeconds : gpus * secondsBetween(startedAt, endedAt),
      stages: result?.stages,
      startedAt,
      endedAt,
    };
    state.attempts.push(record);
    const progressed = (after?.step ?? 0) > stepBefore;
    state.attemptsWithoutNewCheckpoint =
      childOutcome === 'failed' && !progressed ? state.attemptsWithoutNewCheckpoint + 1 : 0;
    if (cancelled) throw cancelled;
  }
}
