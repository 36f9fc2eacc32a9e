import { CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { ExperimentInput } from '../domain/run/experiment-input.js';
import type { MlflowTracking, TrackingOutcome } from '../domain/tracking/tracking.js';
import type { WandbIds } from '../domain/tracking/wandb-env.js';
import { unwrapFailure } from './failure-info.js';
import { trackMlflowParent, trackMlflowRun } from './policies.js';

/**
 * Recording in an experiment tracker, for the experiment, campaign and sweep workflows. Never
 * cancelled (a cancelled run is recorded too) and never fatal: after the activity's bounded
 * retries a failure becomes `tracking: {outcome: 'failed', error}` in the workflow's result, and
 * the run's own outcome stays what it was.
 */
async function recorded(
  fn: () => Promise<{ runId: string; experimentId: string }>,
): Promise<TrackingOutcome> {
  try {
    const r = await CancellationScope.nonCancellable(fn);
    return { outcome: 'succeeded', runId: r.runId, experimentId: r.experimentId };
  } catch (err) {
    return { outcome: 'failed', error: unwrapFailure(err).message };
  }
}

/** An experiment's run, after its manifest is written; nested under its parent's run, if any. */
export async function trackExperiment(
  mlflow: MlflowTracking | undefined,
  manifestPath: string | undefined,
): Promise<TrackingOutcome | undefined> {
  if (!mlflow) return undefined;
  if (!manifestPath) return { outcome: 'skipped', error: 'no manifest was written: nothing to record' };
  const info = workflowInfo();
  return recorded(() =>
    trackMlflowRun({
      mlflow,
      workflowId: info.workflowId,
      parentWorkflowId: info.parent?.workflowId,
      manifestPath,
    }),
  );
}

/** A campaign's or sweep's own run: opened before its first child, closed with its ending. */
export async function trackParent(
  mlflow: MlflowTracking | undefined,
  kind: 'campaign' | 'sweep',
  name: string,
  spec: unknown,
  ending?: { outcome: string; reason?: string; files: string[] },
): Promise<TrackingOutcome | undefined> {
  if (!mlflow) return undefined;
  const info = workflowInfo();
  return recorded(() =>
    trackMlflowParent({
      mlflow,
      kind,
      workflowId: info.workflowId,
      temporalRunId: info.runId,
      name,
      spec,
      ending,
    }),
  );
}

/**
 * Whose W&B run the training job writes, for the train activity (only when trainer.loggers has
 * wandb, so other runs' activity inputs stay as they were). A campaign's attempts are the ones
 * given the campaign's shared checkpointDir: they continue the campaign's run; a sweep's children
 * are grouped by the sweep id.
 */
export function wandbIds(input: ExperimentInput): { wandb?: WandbIds } {
  if (!input.spec.trainer.loggers.includes('wandb')) return {};
  const { workflowId, parent } = workflowInfo();
  if (!parent) return { wandb: { workflowId } };
  return input.checkpointDir !== undefined
    ? { wandb: { workflowId, campaignId: parent.workflowId } }
    : { wandb: { workflowId, sweepId: parent.workflowId } };
}
