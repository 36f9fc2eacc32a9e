import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
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
import type { ExperimentInput, ExperimentResult } from '../domain/experiment-input.js';
import { ErrorTypes } from '../domain/error-types.js';
import { type ExperimentSpec, workerGpus } from '../domain/experiment.js';
import { type GpuUsage, sumGpuUsage } from '../domain/gpu-usage.js';
import {
  type ChildOutcome,
  type SweepInput,
  SweepInputSchema,
  type SweepManifest,
  type SweepResult,
  type SweepStatus,
} from '../domain/sweep.js';
import { emptySchedulerState, onIntermediateResult, promotableChild, rungsOf } from '../domain/asha.js';
import { ledgerPath, runCheckpointDir } from '../domain/paths.js';
import { type SweepLimitChange, sweepLimitsRefusal } from '../domain/sweep-limits.js';
import { applyParams, childWorkflowId, expandSweep } from '../domain/sweep-expand.js';
import { bestChild, countOutcomes, rankChildren } from '../domain/sweep-results.js';
import { workflowNowIso } from './clock.js';
import { unwrapFailure } from './failure-info.js';
import { archiveSweep, latestCompleteCheckpoint } from './policies.js';
import { SearchAttributes as K, startSearchAttributes } from './search-attributes.js';
import { statusQuery } from './status-query.js';
import { notifyTargets } from './notify.js';
import { notifyScheduleWillPause } from './schedule-pause.js';
import { trackParent } from './tracking.js';
import { stopEarlySignal } from './definitions.js';
import { intermediateResultSignal, setSweepLimitsUpdate, sweepStatusQuery } from './sweep-definitions.js';

/** A child's GPU-seconds, kept as two numbers (results travel through continue-as-new). */
const gpuFields = (u: GpuUsage | undefined) =>
  u ? { gpuSeconds: u.allocatedSeconds, busyGpuSeconds: u.busySeconds } : {};
import { ChangingAttributes } from './visibility.js';

/** Errors are kept to one line per child: the child's own manifest has the rest. */
const shortError = (text: string) => text.split('\n')[0]?.slice(0, 300) ?? '';

/**
 * A sweep: one child workflow (the `experiment` workflow by default) per parameter set of the
 * grid x seeded-random expansion, with ids `<sweep id>-<index>-<hash of params>` and a reuse
 * policy that refuses a second run of the same id. Never more than `concurrency` children run at
 * once; after `failureBudget` failed children no new child starts and the running ones finish.
 * Results are ranked by the objective and archived once as sweep.json + sweep.csv. Long sweeps
 * drain their running children and continue-as-new, carrying the compact results and the next
 * index. Cancel cancels every child and waits for each one's teardown. Query: `sweepStatus`.
 */
export async function sweep(rawInput: SweepInput): Promise<SweepResult> {
  const parsed = SweepInputSchema.safeParse(rawInput);
  // A thrown ZodError would fail the workflow task forever; bad input fails the sweep once, clearly.
  if (!parsed.success)
    throw ApplicationFailure.create({
      type: ErrorTypes.InvalidSpec,
      nonRetryable: true,
      message: `invalid sweep input: ${parsed.error.message}`,
    });
  const input = parsed.data;
  const { sweep: spec, provenance } = input;
  const sweepId = workflowInfo().workflowId;
  const paramSets = expandSweep(spec);
  const total = paramSets.length;
  const results: ChildOutcome[] = [...(input.carry?.results ?? [])];
  const runs = input.carry?.runs ?? 1;
  let next = input.carry?.nextIndex ?? 0;
  let maxRunning = input.carry?.maxRunning ?? 0;
  let running = 0;
  let failed = results.filter((r) => r.outcome === 'failed').length;
  // Limits in force: the spec's, or the last change `sweep set` made (carried across continue-as-new).
  const limitChanges: SweepLimitChange[] = [...(input.carry?.limitChanges ?? [])];
  let concurrency = limitChanges.at(-1)?.concurrency ?? spec.concurrency;
  let failureBudget = limitChanges.length > 0 ? limitChanges.at(-1)?.failureBudget : spec.failureBudget;
  const budgetExhausted = () => failureBudget !== undefined && failed >= failureBudget;

  const status = (): SweepStatus => ({
    total,
    started: next,
    running,
    ...countOutcomes(results),
    stoppedByFailureBudget: budgetExhausted(),
    runs,
    best: bestChild(results, spec.objective),
    concurrency,
    failureBudget,
  });
  setHandler(sweepStatusQuery, status);
  let startingDone = false;
  setHandler(
    setSweepLimitsUpdate,
    (limits) => {
      concurrency = limits.concurrency ?? concurrency;
      failureBudget = limits.failureBudget ?? failureBudget;
      limitChanges.push({ at: workflowNowIso(), concurrency, failureBudget });
      return status();
    },
    {
      validator: (limits) => {
        const refusal = sweepLimitsRefusal(limits, { done: startingDone, failed });
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(statusQuery, () => ({ kind: 'sweep', ...status() }));
  // The parent run the children nest under; the base spec's `tracking` names the tracker.
  const mlflow = spec.base.tracking?.mlflow;
  let tracking = await trackParent(mlflow, 'sweep', spec.name, spec);

  // Early stopping: each running child's in-loop validations go through the pure rung rule.
  const { scheduler } = spec;
  const schedulerState = input.carry?.scheduler ?? emptySchedulerState();
  const indexOfRunning: Record<string, number> = {};
  const stopSent: Record<number, boolean> = {};
  setHandler(intermediateResultSignal, (r) => {
    const index = indexOfRunning[r.workflowId];
    const value = scheduler ? r.metrics[scheduler.metric] : undefined;
    if (!scheduler || index === undefined || value === undefined) return;
    const d = onIntermediateResult(
      scheduler,
      schedulerState,
      { index, step: r.step, value },
      spec.base.trainer.totalTrainingSteps,
    );
    if (!d.stop || stopSent[index]) return;
    stopSent[index] = true;
    getExternalWorkflowHandle(r.workflowId)
      .signal(stopEarlySignal, { rung: d.rung ?? r.step, step: r.step, reason: d.reason ?? '' })
      .catch(() => undefined);
  });
  // ASHA judges only at its rungs: the children report just those validations.
  const rungReports = (child: ExperimentSpec) =>
    scheduler?.type === 'asha'
      ? {
          reportSteps: rungsOf(scheduler, spec.base.trainer.totalTrainingSteps).filter(
            (r) => r <= child.trainer.totalTrainingSteps,
          ),
        }
      : {};
  const lastIntermediate = (index: number) => {
    const last = schedulerState.reports[String(index)]?.at(-1);
    return last ? { lastIntermediate: last } : {};
  };

  function record(outcome: ChildOutcome): void {
    results.push(outcome);
    if (outcome.outcome === 'failed') failed++;
  }

  /** A promoted child: a new workflow that resumes the stopped one's last kept checkpoint. */
  interface Promotion {
    rung: number;
    prior: ChildOutcome;
    resume: Pick<ExperimentInput, 'resumeFrom' | 'checkpointDir' | 'ledgerPath'>;
    fromStep: number;
  }

  async function runChild(index: number, promotion?: Promotion): Promise<void> {
    const params = paramSets[index] ?? {};
    const firstId = childWorkflowId(sweepId, index, params);
    const workflowId = promotion ? `${firstId}-p${promotion.rung}` : firstId;
    const applied = applyParams(spec.base, params);
    if (!applied.ok) {
      // Validated at load time; a spec that changed under a schedule still fails clearly here.
      record({
        index,
        workflowId,
        outcome: 'failed',
        error: applied.issues.map((i) => `${i.field}: ${i.message}`).join('; '),
      });
      return;
    }
    if (!promotion) running++; // a promotion took its slot before looking for the checkpoint
    maxRunning = Math.max(maxRunning, running);
    indexOfRunning[workflowId] = index;
    stopSent[index] = false;
    // A promoted child's row replaces the stopped one's: GPU-seconds of both, the promotions listed.
    const promoted = (o: ChildOutcome): ChildOutcome => {
      if (!promotion) return o;
      const { prior } = promotion;
      results.splice(results.indexOf(prior), 1);
      const add = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : a + b);
      return {
        ...o,
        gpuSeconds: add(prior.gpuSeconds, o.gpuSeconds),
        busyGpuSeconds: add(prior.busyGpuSeconds, o.busyGpuSeconds),
        promotions: [
          ...(prior.promotions ?? []),
          { rung: promotion.rung, fromStep: promotion.fromStep, workflowId },
        ],
      };
    };
    try {
      const childInput: ExperimentInput = {
        spec: applied.spec,
        provenance,
        ...(scheduler ? { reportValidations: true, ...rungReports(applied.spec) } : {}),
        ...promotion?.resume,
      };
      const r = await executeChild<(i: ExperimentInput) => Promise<ExperimentResult>>(
        input.childWorkflowType,
        {
          workflowId,
          args: [childInput],
          typedSearchAttributes: startSearchAttributes({
            kind: 'experiment',
            name: applied.spec.name,
            backend: applied.spec.backend,
            stage: 'preflight',
            sweepId,
          }),
          staticSummary:
            childSummary(spec.name, index, total, params) +
            (promotion ? ` (promoted at rung ${promotion.rung}, from step ${promotion.fromStep})` : ''),
          // Cancel reaches the child and the sweep waits for its teardown to finish.
          cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
          // A terminated sweep still lets its children clean up (terminate would skip teardown).
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        },
      );
      // A child paused by hand (the campaign signal) stopped before validation: counted as cancelled.
      const outcome: ChildOutcome['outcome'] = r.outcome === 'paused' ? 'cancelled' : r.outcome;
      const paused = r.outcome === 'paused';
      record(
        promoted({
          index,
          workflowId,
          outcome,
          successRate: r.validation.successRate,
          manifestPath: r.archive.manifestPath,
          error: paused ? 'paused by hand before validation' : undefined,
          ...gpuFields(r.gpuUsage),
          ...lastIntermediate(index),
          ...(r.stoppedEarly
            ? { stoppedEarly: { rung: r.stoppedEarly.rung, reason: r.stoppedEarly.reason } }
            : {}),
        }),
      );
    } catch (err) {
      // A failed child carries its experiment result in the failure details, if it got that far.
      const failure = unwrapFailure(err);
      const r = failure.details[0] as ExperimentResult | undefined;
      record(
        promoted({
          index,
          workflowId,
          outcome: failure.cancelled ? 'cancelled' : 'failed',
          successRate: r?.validation.successRate,
          manifestPath: r?.archive.manifestPath,
          error: shortError(failure.message),
          ...gpuFields(r?.gpuUsage),
          ...lastIntermediate(index),
        }),
      );
    } finally {
      running--;
      delete indexOfRunning[workflowId];
    }
  }

  // ASHA promotion (opt-in, `promote: true`): checked whenever a slot is free, before a new configuration.
  const promoting = scheduler?.type === 'asha' && scheduler.promote;
  const candidate = () =>
    promoting && scheduler
      ? promotableChild(
          scheduler,
          schedulerState,
          results.flatMap((r) =>
            r.outcome === 'stoppedEarly' && r.stoppedEarly
              ? [{ index: r.index, rung: r.stoppedEarly.rung }]
              : [],
          ),
        )
      : undefined;
  /** Promote `c`: find the stopped child's last complete checkpoint (campaign-style) and resume it. */
  async function promote(c: { index: number; rung: number }): Promise<void> {
    schedulerState.promoted = [...(schedulerState.promoted ?? []), c];
    const prior = results.find((r) => r.index === c.index);
    const params = paramSets[c.index] ?? {};
    const applied = applyParams(spec.base, params);
    if (!prior || !applied.ok) return;
    running++; // the slot is taken now, while the checkpoint is looked up
    const firstId = childWorkflowId(sweepId, c.index, params);
    const { storage, name } = applied.spec;
    const resume = {
      checkpointDir: runCheckpointDir(storage, name, firstId),
      ledgerPath: ledgerPath(storage.archiveDir, name, firstId),
    };
    let latest: { step: number; path: string } | undefined;
    try {
      latest = (await latestCompleteCheckpoint({ ...resume, now: workflowNowIso() })).latest;
    } catch {
      latest = undefined;
    }
    if (!latest) {
      running--; // nothing kept to continue from: the child stays stopped
      return;
    }
    await runChild(c.index, {
      rung: c.rung,
      prior,
      resume: { ...resume, resumeFrom: latest.path },
      fromStep: latest.step,
    });
  }

  const historyFull = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= input.historyEventLimit;
  let cancelled: unknown;
  try {
    while (next < total && !budgetExhausted()) {
      await condition(() => running < concurrency);
      if (budgetExhausted()) break;
      if (historyFull()) {
        // Drain first: a running child's result must land in the carried results.
        await condition(() => running === 0);
        await continueAsNew<typeof sweep>({
          ...input,
          carry: {
            nextIndex: next,
            results,
            runs: runs + 1,
            maxRunning,
            ...(limitChanges.length > 0 ? { limitChanges } : {}),
            ...(scheduler ? { scheduler: schedulerState } : {}),
          },
        });
      }
      const c = candidate();
      if (c) {
        void promote(c);
        continue;
      }
      void runChild(next);
      next++;
    }
    startingDone = true;
    // Every configuration has started: promotions take the slots that free up, until none is left.
    while (promoting && !budgetExhausted()) {
      await condition(() => running === 0 || (running < concurrency && candidate() !== undefined));
      const c = running < concurrency ? candidate() : undefined;
      if (c) void promote(c);
      else if (running === 0) break;
    }
    await condition(() => running === 0);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    cancelled = err;
    // Children were asked to cancel with the scope; wait until each has torn down and reported.
    await CancellationScope.nonCancellable(() => condition(() => running === 0));
  }

  const ranked = rankChildren(results, (i) => paramSets[i] ?? {}, spec.objective);
  const best = bestChild(results, spec.objective);
  const counts = countOutcomes(results);
  // Reaching the budget fails the sweep (a schedule with pauseOnFailure then pauses).
  const stoppedByFailureBudget = budgetExhausted();
  const outcome: SweepManifest['outcome'] =
    cancelled !== undefined ? 'cancelled' : stoppedByFailureBudget ? 'failed' : 'succeeded';
  const info = workflowInfo();
  const manifest: SweepManifest = {
    schemaVersion: 1,
    sweep: spec.name,
    temporal: {
      workflowId: sweepId,
      runId: info.runId,
      namespace: info.namespace,
      taskQueue: info.taskQueue,
    },
    provenance,
    spec,
    objective: spec.objective,
    counts: { total, ...counts, notStarted: total - results.length },
    stoppedByFailureBudget,
    outcome,
    children: ranked,
    ...(limitChanges.length > 0 ? { limitChanges } : {}),
    gpuUsage: sumGpuUsage(
      results.map((r) =>
        r.gpuSeconds === undefined
          ? undefined
          : {
              gpus: workerGpus(spec.base),
              allocatedSeconds: r.gpuSeconds,
              busySeconds: r.busyGpuSeconds ?? 0,
              allocatedGpuHours: 0,
            },
      ),
      spec.base.cost,
    ),
    writtenAt: workflowNowIso(),
  };
  // A scheduled sweep learns its id only when it fires: its RagenSweepId comes with this upsert.
  const visible = new ChangingAttributes()
    .set(K.stage, 'done')
    .set(K.outcome, outcome)
    .set(K.sweepId, sweepId);
  // The objective is validation.successRate: the best child's is the sweep's.
  if (best) visible.set(K.validationSuccess, best.value);
  visible.set(K.gpuSeconds, manifest.gpuUsage?.allocatedSeconds ?? 0);
  visible.flush(); // batched with the archive activity
  const archived = await CancellationScope.nonCancellable(() =>
    archiveSweep({ manifest, archiveDir: spec.base.storage.archiveDir }),
  );
  const files = [archived.manifestPath, archived.csvPath].filter((f): f is string => f !== undefined);
  tracking = (await trackParent(mlflow, 'sweep', spec.name, spec, { outcome, files })) ?? tracking;
  const result: SweepResult = {
    sweepId,
    total,
    ...counts,
    notStarted: total - results.length,
    stoppedByFailureBudget,
    runs,
    maxRunning,
    ranked,
    manifestPath: archived.manifestPath,
    csvPath: archived.csvPath,
    ...(tracking ? { tracking } : {}),
  };
  const event = stoppedByFailureBudget ? 'failureBudgetExhausted' : outcome;
  const reason = stoppedByFailureBudget
    ? `${failed} children failed (failureBudget ${failureBudget})`
    : `${counts.succeeded} of ${total} children succeeded`;
  await notifyTargets(
    spec.base.notify,
    { kind: 'sweep', name: spec.name, reason, manifestPath: archived.manifestPath },
    event,
  );
  // The sweep fails below: a schedule that started it pauses on that.
  if (cancelled === undefined && stoppedByFailureBudget)
    await notifyScheduleWillPause(spec.base.notify, spec.name, reason);
  if (cancelled !== undefined) throw cancelled;
  if (stoppedByFailureBudget) {
    throw ApplicationFailure.create({
      type: ErrorTypes.SweepFailureBudgetExhausted,
      nonRetryable: true,
      message: `${failed} children failed (failureBudget ${failureBudget}); ${total - results.length} of ${total} were not started`,
      details: [result],
    });
  }
  return result;
}

/** The Temporal UI's summary of a sweep child: the sweep, its index and the swept parameters. */
function childSummary(name: string, index: number, total: number, params: Record<string, unknown>): string {
  const swept = Object.entries(params)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  return `${name} child ${index + 1}/${total}: ${swept || '(base spec)'}`;
}
