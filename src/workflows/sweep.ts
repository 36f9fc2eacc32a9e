import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  type ChildWorkflowOptions,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { schedulerStop } from '../domain/sweep/asha.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import type { ExperimentInput, ExperimentResult } from '../domain/run/experiment-input.js';
import { ledgerPath, runCheckpointDir } from '../domain/spec/paths.js';
import {
  type ChildOutcome,
  type SweepInput,
  SweepInputSchema,
  type SweepResult,
} from '../domain/sweep/sweep.js';
import {
  type Promotion,
  childExperimentInput,
  childSummary,
  endedChild,
  failedChild,
  lastIntermediateOf,
  promotedWorkflowId,
  refusedChild,
  withPromotion,
} from '../domain/sweep/sweep-children.js';
import { type SweepEnding, sweepEnding } from '../domain/sweep/sweep-ending.js';
import { applyParams, childWorkflowId } from '../domain/sweep/sweep-expand.js';
import { type SweepLimits, changedLimits, sweepLimitsRefusal } from '../domain/sweep/sweep-limits.js';
import {
  type Promotable,
  configurationsLeft,
  nextWhilePromoting,
  nextWhileStarting,
  promotes,
  slotFree,
} from '../domain/sweep/sweep-next.js';
import { bestChild, countOutcomes } from '../domain/sweep/sweep-results.js';
import { workflowNowIso } from './clock.js';
import { pruneSignal } from './experiment-definitions.js';
import { withPrunedName } from '../domain/run/pruned-name.js';
import { unwrapFailure } from './failure-info.js';
import { notifyTargets } from './notify.js';
import { archiveSweep, latestCompleteCheckpoint } from './policies.js';
import { notifyScheduleWillPause } from './schedule-pause.js';
import { askSearch, tellSearch } from './search.js';
import { SearchAttributes as K, startSearchAttributes } from './search-attributes.js';
import {
  intermediateResultSignal,
  setSweepLimitsUpdate,
  statusQuery,
  sweepStatusQuery,
} from './sweep-definitions.js';
import {
  type ParsedSweepInput,
  type SweepRun,
  budgetExhausted,
  buildSweepManifest,
  failedChildren,
  newSweepRun,
  notStarted,
  slotsOf,
  sweepCarry,
  sweepResult,
  sweepStatusOf,
} from './sweep-run.js';
import { trackParent } from './tracking.js';
import { ChangingAttributes } from './visibility.js';

/** Where the sweep's manifest and table were written (absent when the archive wrote none). */
type Archived = { manifestPath?: string; csvPath?: string };

/**
 * A sweep: one child workflow (the `experiment` workflow by default) per parameter set of the
 * grid x seeded-random expansion, with ids `<sweep id>-<index>-<hash of params>` and a reuse
 * policy that refuses a second run of the same id. Never more than `concurrency` children run at
 * once; after `failureBudget` failed children no new child starts and the running ones finish.
 * Results are ranked by the objective and archived once as sweep.json + sweep.csv. Long sweeps
 * drain their running children and continue-as-new, carrying the compact results and the next
 * index. Cancel cancels every child and waits for each one's teardown. Query: `sweepStatus`;
 * Update: `setLimits` (`sweep set`); signal: `intermediateResult` (a child's in-loop validation).
 */
export async function sweep(rawInput: SweepInput): Promise<SweepResult> {
  const run = newSweepRun(parseSweepInput(rawInput), workflowInfo());
  answerQueriesUpdatesAndSignals(run);
  // The parent run the children nest under; the base spec's `tracking` names the tracker.
  run.tracking = await trackSweep(run);
  try {
    await startEveryConfiguration(run);
    await promoteWhileSlotsFree(run);
    await condition(() => run.running === 0);
  } catch (err) {
    await settleCancellation(run, err);
  }
  const ending = endingOf(run);
  const archived = await archiveManifest(run, ending);
  run.tracking = (await trackSweep(run, ending, archived)) ?? run.tracking;
  await notifyEnding(run, ending, archived);
  return finish(run, ending, archived);
}

/** A thrown ZodError would fail the workflow task forever; bad input fails the sweep once, clearly. */
function parseSweepInput(raw: SweepInput): ParsedSweepInput {
  // A sweep carried across continue-as-new by 1.0 names its pruned children `stoppedEarly`.
  const parsed = SweepInputSchema.safeParse(withPrunedName(raw));
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.create({
    type: ErrorTypes.InvalidSpec,
    nonRetryable: true,
    message: `invalid sweep input: ${parsed.error.message}`,
  });
}

function answerQueriesUpdatesAndSignals(run: SweepRun): void {
  const status = () => sweepStatusOf(run);
  setHandler(sweepStatusQuery, status);
  setHandler(
    setSweepLimitsUpdate,
    (asked: SweepLimits) => {
      run.limits = changedLimits(run.limits, asked);
      run.limitChanges.push({ at: workflowNowIso(), ...run.limits });
      return status();
    },
    {
      validator: (asked) => {
        const refusal = sweepLimitsRefusal(asked, { done: run.startingDone, failed: failedChildren(run) });
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(statusQuery, () => ({ kind: 'sweep', ...status() }));
  // Early stopping: each running child's in-loop validations go through the pure rung rule.
  const { scheduler, base } = run.input.sweep;
  setHandler(intermediateResultSignal, (r) => {
    const index = run.indexOfRunning[r.workflowId];
    const report = { index, step: r.step, metrics: r.metrics };
    const order = schedulerStop(
      scheduler,
      run.scheduler,
      report,
      base.trainer.totalTrainingSteps,
      run.stopSent,
    );
    if (!order) return;
    run.stopSent[order.index] = true;
    getExternalWorkflowHandle(r.workflowId)
      .signal(pruneSignal, order.stop)
      .catch(() => undefined);
  });
}

/** The sweep's parent run in the tracker: opened before the first child, closed with the ending. */
function trackSweep(run: SweepRun, ending?: SweepEnding, archived?: Archived) {
  const { sweep: spec } = run.input;
  const files = [archived?.manifestPath, archived?.csvPath].filter((f): f is string => f !== undefined);
  const closing = ending ? { outcome: ending.outcome, files } : undefined;
  return trackParent(spec.base.tracking?.mlflow, 'sweep', spec.name, spec, closing);
}

/** One configuration per free slot, in index order; a promotion first when ASHA has one. */
async function startEveryConfiguration(run: SweepRun): Promise<void> {
  while (configurationsLeft(slotsOf(run))) {
    await condition(() => slotFree({ running: run.running, concurrency: run.limits.concurrency }));
    const move = nextWhileStarting({ ...slotsOf(run), historyFull: historyFull(run) });
    if (move.do === 'stop') break;
    if (move.do === 'continueAsNew') await drainAndContinueAsNew(run);
    if (move.do === 'promote') void promote(run, move.child);
    if (move.do === 'start') {
      // Only a search awaits here: grid and random sweeps keep 1.0's order of commands (replay).
      if (run.input.sweep.search) await askSearch(run, move.index);
      void runChild(run, move.index);
      run.next++;
    }
  }
  run.startingDone = true;
}

const historyFull = (run: SweepRun) =>
  workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= run.input.historyEventLimit;

/** Drain first: a running child's result must land in the carried results. */
async function drainAndContinueAsNew(run: SweepRun): Promise<never> {
  await condition(() => run.running === 0);
  return continueAsNew<typeof sweep>({ ...run.input, carry: sweepCarry(run) });
}

/** Every configuration has started: promotions (opt-in) take the slots that free up, until none is left. */
async function promoteWhileSlotsFree(run: SweepRun): Promise<void> {
  while (promotes(run.input.sweep.scheduler) && !budgetExhausted(run)) {
    await condition(() => nextWhilePromoting(slotsOf(run)).do !== 'wait');
    const move = nextWhilePromoting(slotsOf(run));
    if (move.do === 'stop') break;
    if (move.do === 'promote') void promote(run, move.child);
  }
}

/** A row for every child that ends; a promoted child's replaces the stopped one's. */
function record(run: SweepRun, row: ChildOutcome, promotion?: Promotion): void {
  if (!promotion) {
    run.results.push(row);
    return;
  }
  run.results.splice(run.results.indexOf(promotion.prior), 1);
  run.results.push(withPromotion(row, promotion));
}

/** Run configuration `index` as a child workflow (a promotion resumes a stopped one) and record how it ended. */
async function runChild(run: SweepRun, index: number, promotion?: Promotion): Promise<void> {
  const params = run.paramSets[index] ?? {};
  const firstId = childWorkflowId(run.ids.workflowId, index, params);
  const workflowId = promotion ? promotedWorkflowId(firstId, promotion.rung) : firstId;
  const applied = applyParams(run.input.sweep.base, params);
  if (!applied.ok) {
    record(run, refusedChild(index, workflowId, applied.issues));
    if (run.input.sweep.search) await tellSearch(run, index);
    return;
  }
  if (!promotion) run.running++; // a promotion took its slot before looking for the checkpoint
  run.maxRunning = Math.max(run.maxRunning, run.running);
  run.indexOfRunning[workflowId] = index;
  run.stopSent[index] = false;
  try {
    const answer = await executeChild<(i: ExperimentInput) => Promise<ExperimentResult>>(
      run.input.childWorkflowType,
      childOptions(run, index, workflowId, applied.spec, promotion),
    );
    const r = withPrunedName(answer); // a child that ran on 1.0 code answers `stoppedEarly`
    record(run, endedChild(index, workflowId, r, lastIntermediateOf(run.scheduler, index)), promotion);
  } catch (err) {
    // A failed child carries its experiment result in the failure details, if it got that far.
    const failure = unwrapFailure(err);
    const ended = {
      cancelled: failure.cancelled,
      message: failure.message,
      result: withPrunedName(failure.details[0] as ExperimentResult | undefined),
    };
    record(run, failedChild(index, workflowId, ended, lastIntermediateOf(run.scheduler, index)), promotion);
  } finally {
    // search tpe: the slot stays taken until the study knows, so the next ask learns from it.
    if (run.input.sweep.search) await tellSearch(run, index);
    run.running--;
    delete run.indexOfRunning[workflowId];
  }
}

function childOptions(
  run: SweepRun,
  index: number,
  workflowId: string,
  spec: ExperimentSpec,
  promotion: Promotion | undefined,
): ChildWorkflowOptions & { args: [ExperimentInput] } {
  const { sweep: sweepSpec, provenance } = run.input;
  const childInput = childExperimentInput({
    spec,
    provenance,
    scheduler: sweepSpec.scheduler,
    baseTotalSteps: sweepSpec.base.trainer.totalTrainingSteps,
    resume: promotion?.resume,
  });
  return {
    workflowId,
    args: [childInput],
    typedSearchAttributes: startSearchAttributes({
      kind: 'experiment',
      name: spec.name,
      backend: spec.backend,
      stage: 'preflight',
      sweepId: run.ids.workflowId,
      owner: spec.owner,
      team: spec.team,
    }),
    staticSummary: childSummary(sweepSpec.name, index, run.total, run.paramSets[index] ?? {}, promotion),
    // Cancel reaches the child and the sweep waits for its teardown to finish.
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A terminated sweep still lets its children clean up (terminate would skip teardown).
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  };
}

/** Promote `c`: find the stopped child's last complete checkpoint (campaign-style) and resume it. */
async function promote(run: SweepRun, c: Promotable): Promise<void> {
  run.scheduler.promoted = [...(run.scheduler.promoted ?? []), c];
  const prior = run.results.find((r) => r.index === c.index);
  const params = run.paramSets[c.index] ?? {};
  const applied = applyParams(run.input.sweep.base, params);
  if (!prior || !applied.ok) return;
  run.running++; // the slot is taken now, while the checkpoint is looked up
  const firstId = childWorkflowId(run.ids.workflowId, c.index, params);
  const { storage, name } = applied.spec;
  const resume = {
    checkpointDir: runCheckpointDir(storage, name, firstId),
    ledgerPath: ledgerPath(storage.archiveDir, name, firstId),
  };
  const latest = await latestCompleteCheckpoint({ ...resume, now: workflowNowIso() }).then(
    (found) => found.latest,
    () => undefined,
  );
  if (!latest) {
    run.running--; // nothing kept to continue from: the child stays stopped
    return;
  }
  const resumeFrom = { ...resume, resumeFrom: latest.path };
  await runChild(run, c.index, { rung: c.rung, prior, resume: resumeFrom, fromStep: latest.step });
}

/** Children were asked to cancel with the scope; wait until each has torn down and reported. */
async function settleCancellation(run: SweepRun, err: unknown): Promise<void> {
  if (!isCancellation(err)) throw err;
  run.cancellation = err;
  await CancellationScope.nonCancellable(() => condition(() => run.running === 0));
}

function endingOf(run: SweepRun): SweepEnding {
  const { succeeded, failed } = countOutcomes(run.results);
  return sweepEnding({
    cancelled: run.cancellation !== undefined,
    total: run.total,
    succeeded,
    failed,
    notStarted: notStarted(run),
    failureBudget: run.limits.failureBudget,
  });
}

/** sweep.json and sweep.csv, written once and never cancelled; the search attributes ride along. */
async function archiveManifest(run: SweepRun, ending: SweepEnding): Promise<Archived> {
  const { sweep: spec } = run.input;
  const manifest = buildSweepManifest(run, ending, workflowNowIso());
  // A scheduled sweep learns its id only when it fires: its RagenSweepId comes with this upsert.
  const visible = new ChangingAttributes()
    .set(K.stage, 'done')
    .set(K.outcome, ending.outcome)
    .set(K.sweepId, run.ids.workflowId);
  // The objective is validation.successRate: the best child's is the sweep's.
  const best = bestChild(run.results, spec.objective);
  if (best) visible.set(K.validationSuccess, best.value);
  visible.set(K.gpuSeconds, manifest.gpuUsage?.allocatedSeconds ?? 0);
  visible.flush(); // batched with the archive activity
  return CancellationScope.nonCancellable(() =>
    archiveSweep({ manifest, archiveDir: spec.base.storage.archiveDir }),
  );
}

async function notifyEnding(run: SweepRun, ending: SweepEnding, archived: Archived): Promise<void> {
  const { sweep: spec } = run.input;
  const { reason } = ending;
  await notifyTargets(
    spec.base.notify,
    { kind: 'sweep', name: spec.name, reason, manifestPath: archived.manifestPath },
    ending.event,
  );
  // The sweep fails in finish: a schedule that started it pauses on that.
  if (ending.failure !== undefined) await notifyScheduleWillPause(spec.base.notify, spec.name, reason);
}

function finish(run: SweepRun, ending: SweepEnding, archived: Archived): SweepResult {
  const result = sweepResult(run, ending, archived);
  if (run.cancellation !== undefined) throw run.cancellation;
  if (ending.failure === undefined) return result;
  throw ApplicationFailure.create({
    type: ErrorTypes.SweepFailureBudgetExhausted,
    nonRetryable: true,
    message: ending.failure,
    details: [result],
  });
}
