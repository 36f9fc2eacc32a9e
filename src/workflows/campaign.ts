import {
  ApplicationFailure,
  CancellationScope,
  type ChildWorkflowHandle,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  CampaignInput,
  CampaignProgress,
  CampaignResult,
  LatestCheckpoint,
} from '../domain/campaign/campaign.js';
import { extendUpdate, pauseUpdate, progressQuery, resumeUpdate } from './campaign-definitions.js';
import {
  type AttemptEnding,
  type CampaignRun,
  attemptInput,
  attemptRecord,
  budgetFailure,
  buildCampaignManifestDraft,
  campaignResult,
  earlyStopReason,
  failedAttemptOutcome,
  finishedTraining,
  newCampaignRun,
  progressOf,
  stallCountAfter,
} from './campaign-run.js';
import { workflowNowIso } from './clock.js';
import { stopAtNextCheckpointSignal } from './experiment-definitions.js';
import type { experiment } from './experiment.js';
import { unwrapFailure } from './failure-info.js';
import { metricsSeriesPath, runArchiveDir } from '../domain/spec/paths.js';
import {
  applyCheckpointRetention,
  archiveCampaign,
  hashCheckpoints,
  latestCompleteCheckpoint,
} from './policies.js';
import { SearchAttributes as K, startSearchAttributes } from './search-attributes.js';
import { sumGpuUsage } from '../domain/usage/gpu-usage.js';
import { withPrunedName } from '../domain/run/pruned-name.js';
import { logStage } from './stage-log.js';
import { progressSignal, statusQuery } from './shared-definitions.js';
import { notifyTargets } from './notify.js';
import { trackParent } from './tracking.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import { ChangingAttributes } from './visibility.js';
import { CAMPAIGN_PREEMPTION } from './patches.js';

type Child = ChildWorkflowHandle<typeof experiment>;

/**
 * A training campaign: attempts, each a child `experiment` workflow (`<campaign id>-a<n>`) that runs
 * every stage. After a failed attempt the next one resumes explicitly (resume_path) from the latest
 * COMPLETE checkpoint in the campaign's shared checkpoint dir (tracker + ledger hashes, see the
 * latestCompleteCheckpoint activity). Budgets: maxAttempts, maxAttemptsWithoutNewCheckpoint.
 * Continue-as-new between attempts past budgets.historyEventsBeforeContinueAsNew, carrying lineage.
 * Updates: pause (stop after the next checkpoint, tear down, wait), resume, extend(steps). Cancel
 * (workflow cancellation) is graceful: the child archives what exists and tears down. Queries:
 * status, progress. The campaign manifest links every attempt's manifest; it is written once.
 */
export async function campaign(input: CampaignInput): Promise<CampaignResult> {
  const run = newCampaignRun(input, workflowInfo());
  run.visible = new ChangingAttributes();
  const child: { current?: Child } = {};
  answerCommandsAndQueries(run, child);
  const { spec, budgets } = input;
  // The parent run every attempt nests under (found again after continue-as-new).
  run.tracking = await trackParent(spec.tracking?.mlflow, 'campaign', spec.name, { ...spec, budgets });
  try {
    for (;;) {
      const latest = await findLatestCheckpoint(run);
      if (finishedTraining(run)) {
        run.outcome = 'succeeded';
        break;
      }
      const trainerStop = earlyStopReason(run);
      if (trainerStop) {
        run.outcome = 'earlyStopped';
        run.reason = trainerStop;
        break;
      }
      failIfNoAttemptLeft(run);
      if (run.state.paused) await waitWhilePaused(run);
      else {
        await continueAsNewIfHistoryIsLong(run);
        await runAttempt(run, child, latest);
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    settleFailure(run, err);
  }
  await writeCampaignManifest(run);
  const ending = {
    outcome: run.outcome,
    reason: run.reason,
    files: run.manifestPath ? [run.manifestPath] : [],
  };
  run.tracking =
    (await trackParent(spec.tracking?.mlflow, 'campaign', spec.name, { ...spec, budgets }, ending)) ??
    run.tracking;
  const stalled = run.failure !== undefined && unwrapFailure(run.failure).type === ErrorTypes.CampaignStalled;
  const draft = {
    kind: 'campaign' as const,
    name: spec.name,
    reason: run.reason,
    manifestPath: run.manifestPath,
  };
  await notifyTargets(spec.notify, draft, stalled ? 'stalled' : run.outcome);
  return finish(run);
}

function answerCommandsAndQueries(run: CampaignRun, child: { current?: Child }): void {
  const { state, live } = run;
  const progress = (): CampaignProgress => progressOf(run, workflowNowIso());
  const pause = () => {
    state.paused = true;
    if (child.current) child.current.signal(stopAtNextCheckpointSignal).catch(() => undefined);
  };
  const refuseWhenDone = (what: string) => {
    if (live.phase === 'done') throw new Error(`the campaign has ended; there is nothing to ${what}`);
  };
  setHandler(
    pauseUpdate,
    () => {
      pause();
      return progress();
    },
    { validator: () => refuseWhenDone('pause') },
  );
  setHandler(
    resumeUpdate,
    () => {
      state.paused = false;
      return progress();
    },
    {
      validator: () => {
        refuseWhenDone('resume');
        if (!state.paused) throw new Error('the campaign is not paused');
      },
    },
  );
  setHandler(
    extendUpdate,
    (steps) => {
      state.totalTrainingSteps += steps;
      return progress();
    },
    {
      validator: (steps) => {
        refuseWhenDone('extend');
        if (!(Number.isInteger(steps) && steps > 0))
          throw new Error(`extend takes a positive whole number of steps, not ${String(steps)}`);
      },
    },
  );
  setHandler(progressSignal, (p) => {
    if (p.step !== undefined) live.step = Math.max(live.step, p.step);
    if (p.lastCheckpointStep !== undefined && p.lastCheckpointStep > live.lastCheckpointStep) {
      live.lastCheckpointStep = p.lastCheckpointStep;
      run.visible?.set(K.checkpointStep, p.lastCheckpointStep).flush();
    }
  });
  setHandler(progressQuery, progress);
  setHandler(statusQuery, () => ({ kind: 'campaign', ...progress() }));
}

/** The latest complete checkpoint of the shared dir (ledger hashes); the query shows it. */
async function findLatestCheckpoint(run: CampaignRun): Promise<LatestCheckpoint['latest']> {
  run.live.phase = 'checking';
  return refreshCheckpoints(run);
}

async function refreshCheckpoints(run: CampaignRun): Promise<LatestCheckpoint['latest']> {
  // New checkpoints are hashed once into the ledger (heartbeating); finding the latest only reads it.
  // With storage.objectStore, a ledger the archive dir lacks (a campaign moved to fresh storage) is
  // fetched back from the store first. Absent without it: the same input as before for other specs.
  const { objectStore, archiveDir } = run.input.spec.storage;
  const ledgerSource = objectStore ? { ledgerSource: { objectStore, archiveDir } } : {};
  await hashCheckpoints({
    checkpointDir: run.checkpointDir,
    ledgerPath: run.ledgerPath,
    now: workflowNowIso(),
    ...ledgerSource,
  });
  run.checkpoints = await latestCompleteCheckpoint({
    checkpointDir: run.checkpointDir,
    ledgerPath: run.ledgerPath,
    now: workflowNowIso(),
    ...ledgerSource,
  });
  run.state.latestCheckpointStep = run.checkpoints.latest?.step ?? 0;
  run.live.lastCheckpointStep = Math.max(run.live.lastCheckpointStep, run.state.latestCheckpointStep);
  await retainCheckpoints(run);
  return run.checkpoints.latest;
}

/** storage.retain: delete what it does not keep, never the resume candidate or a validated checkpoint. */
async function retainCheckpoints(run: CampaignRun): Promise<void> {
  const { retain } = run.input.spec.storage;
  if (!retain) return;
  const latest = run.checkpoints.latest;
  const validated = run.state.attempts
    .filter((a) => a.outcome === 'succeeded' && a.finalStep !== undefined)
    .map((a) => ({
      step: a.finalStep as number,
      why: `validated by attempt ${a.attempt} (${a.manifestPath})`,
    }));
  const { spec } = run.input;
  await applyCheckpointRetention({
    checkpointDir: run.checkpointDir,
    ledgerPath: run.ledgerPath,
    retain,
    protect: [...(latest ? [{ step: latest.step, why: 'the resume candidate' }] : []), ...validated],
    metricsSeriesPaths: run.state.attempts.map((a) =>
      metricsSeriesPath(runArchiveDir(spec.storage, spec.name, a.workflowId)),
    ),
    now: workflowNowIso(),
  });
}

function failIfNoAttemptLeft(run: CampaignRun): void {
  const failure = budgetFailure(run);
  if (!failure) return;
  run.reason = failure.reason;
  throw ApplicationFailure.create({ type: failure.type, message: failure.reason, nonRetryable: true });
}

async function waitWhilePaused(run: CampaignRun): Promise<void> {
  run.live.phase = 'paused';
  logStage('paused', run.state.attempts.length);
  const n = run.state.attempts.length;
  const reason = `paused after attempt ${n} (checkpoint step ${run.state.latestCheckpointStep}); resume with: campaign resume <id>`;
  await notifyTargets(
    run.input.spec.notify,
    { kind: 'campaign', name: run.input.spec.name, reason, sequence: n },
    'paused',
  );
  run.visible?.set(K.stage, 'paused').flush();
  await condition(() => !run.state.paused);
}

/** Between attempts only, carrying the lineage: a running child never loses its parent. */
async function continueAsNewIfHistoryIsLong(run: CampaignRun): Promise<void> {
  const info = workflowInfo();
  // Only after an attempt in this run: a run must make progress before it hands over.
  if (run.attemptsThisRun === 0) return;
  if (info.historyLength < run.input.budgets.historyEventsBeforeContinueAsNew && !info.continueAsNewSuggested)
    return;
  run.state.historyEventsPerRun.push(info.historyLength);
  run.state.continuedAsNew++;
  await continueAsNew<typeof campaign>({ ...run.input, state: run.state });
}

/** One attempt: a child experiment resuming from `latest`, then its lineage record. */
async function runAttempt(
  run: CampaignRun,
  child: { current?: Child },
  latest: LatestCheckpoint['latest'],
): Promise<void> {
  const { spec } = run.input;
  const n = run.state.attempts.length + 1;
  const workflowId = `${run.ids.workflowId}-a${n}`;
  const startedAt = workflowNowIso();
  const startedFromStep = latest?.step ?? 0;
  const totalTrainingSteps = run.state.totalTrainingSteps;
  Object.assign(run.live, { phase: 'running', attemptStartedAt: startedAt, step: startedFromStep });
  logStage('running', n, { child: workflowId, fromStep: startedFromStep });
  run.visible?.set(K.stage, 'running').flush(); // batched with the child's start
  child.current = await startChild<typeof experiment>('experiment', {
    workflowId,
    typedSearchAttributes: startSearchAttributes({
      kind: 'experiment',
      name: spec.name,
      backend: spec.backend,
      stage: 'preflight',
      campaignId: run.ids.workflowId,
      owner: spec.owner,
      team: spec.team,
    }),
    staticSummary: `${spec.name}: attempt ${n} of campaign ${run.ids.workflowId}${latest ? `, resuming from step ${latest.step}` : ''}`,
    args: [attemptInput(run, latest)],
  });
  run.attemptsThisRun++;
  if (run.state.paused) child.current.signal(stopAtNextCheckpointSignal).catch(() => undefined);
  let ending: AttemptEnding & { cancellation?: unknown };
  try {
    ending = await attemptEnding(child.current);
    const success = ending.result?.validation?.successRate;
    if (success !== undefined) run.visible?.set(K.validationSuccess, success);
  } finally {
    child.current = undefined;
  }
  // The campaign's own cancellation must not stop it from recording what the attempt left.
  const after = await CancellationScope.nonCancellable(() => refreshCheckpoints(run));
  const checkpointStepAfter = after?.step ?? 0;
  const endedAt = workflowNowIso();
  const record = attemptRecord(
    run,
    {
      n,
      workflowId,
      startedFrom: latest?.path,
      startedFromStep,
      totalTrainingSteps,
      startedAt,
      endedAt,
      checkpointStepAfter,
    },
    ending,
  );
  run.state.attempts.push(record);
  const progressed = checkpointStepAfter > startedFromStep;
  run.state.attemptsWithoutNewCheckpoint = stallCountAfter(
    run.state.attemptsWithoutNewCheckpoint,
    ending.outcome,
    progressed,
  );
  if (ending.cancellation !== undefined) throw ending.cancellation;
}

/** The child's result, or what its failure carries (a failed experiment's result is in its details). */
async function attemptEnding(child: Child): Promise<AttemptEnding & { cancellation?: unknown }> {
  try {
    const result = withPrunedName(await child.result());
    const message =
      result.outcome === 'paused' || result.outcome === 'earlyStopped'
        ? (result.training.error ?? result.outcome)
        : `step ${result.training.finalStep}`;
    // Only a sweep's scheduler prunes a run; a campaign never asks, so this is a stop from outside.
    const outcome = result.outcome === 'pruned' ? 'cancelled' : result.outcome;
    return { result, outcome, ended: { type: result.outcome, message } };
  } catch (err) {
    const f = unwrapFailure(err);
    return {
      result: f.details[0] as AttemptEnding['result'],
      outcome: failedAttemptOutcome(f, () => patched(CAMPAIGN_PREEMPTION)),
      ended: { type: f.cancelled ? 'cancelled' : (f.type ?? 'failed'), message: f.message },
      cancellation: f.cancelled ? err : undefined,
    };
  }
}

function settleFailure(run: CampaignRun, err: unknown): void {
  run.failure = err;
  run.outcome = isCancellation(err) ? 'cancelled' : 'failed';
  run.reason ??= isCancellation(err) ? 'cancelled by the user' : unwrapFailure(err).message;
}

/** Written once, never cancelled: the checkpoints as they are now, every attempt's lineage. */
async function writeCampaignManifest(run: CampaignRun): Promise<void> {
  run.live.phase = 'done';
  logStage('done', run.state.attempts.length, { outcome: run.outcome });
  run.visible?.set(K.stage, 'done').set(K.outcome, run.outcome);
  run.visible?.set(K.gpuSeconds, sumGpuUsage(run.state.attempts.map((a) => a.gpuUsage)).allocatedSeconds);
  run.visible?.flush(); // batched with the next activity
  run.state.historyEventsPerRun.push(workflowInfo().historyLength);
  await CancellationScope.nonCancellable(async () => {
    await refreshCheckpoints(run).catch(() => undefined);
    const draft = buildCampaignManifestDraft(run, workflowNowIso());
    try {
      run.manifestPath = (
        await archiveCampaign({
          archiveDir: run.input.spec.storage.archiveDir,
          untrusted: run.checkpoints.untrusted,
          draft,
        })
      ).manifestPath;
    } catch (err) {
      run.reason = `${run.reason ?? ''}${run.reason ? '; ' : ''}the campaign manifest could not be written: ${unwrapFailure(err).message}`;
    }
  });
}

function finish(run: CampaignRun): CampaignResult {
  const result = campaignResult(run);
  if (run.failure === undefined) return result;
  if (isCancellation(run.failure)) throw run.failure;
  throw ApplicationFailure.create({
    type: unwrapFailure(run.failure).type ?? 'CampaignFailed',
    message: run.reason ?? unwrapFailure(run.failure).message,
    nonRetryable: true,
    details: [result],
  });
}
