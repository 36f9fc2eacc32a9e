import { readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ManifestSchema } from '../../domain/run/manifest.js';
import { MetricsSeriesSchema } from '../../domain/train/metrics-series.js';
import { metricsSeriesPath } from '../../domain/spec/paths.js';
import type { MlflowTracking } from '../../domain/tracking/tracking.js';
import { MlflowClient, mlflowCredentialsFromEnv } from '../../tracking/mlflow/client.js';
import {
  TAGS,
  flattenParams,
  manifestTags,
  runStatusOf,
  seriesMetrics,
  tag,
  validationMetrics,
} from '../../tracking/mlflow/records.js';
import { findOrCreateRun, logAll, tagOf } from '../../tracking/mlflow/runs.js';
import { sha256OfFile } from '../common/write-once.js';

/** What a tracking activity reports; the experiment also writes it to `tracking.json` by its manifest. */
export interface TrackingRecord {
  tracker: 'mlflow';
  /** Absent in records written before failures were recorded. */
  outcome?: 'succeeded';
  uri: string;
  experimentId: string;
  runId: string;
  parentRunId?: string;
  artifacts: string[];
  /** REST calls this attempt made. */
  calls: number;
  note?: string;
  /** Earlier attempts of the same campaign whose failed tracking this archive retried, and how. */
  retried?: { workflowId: string; outcome: 'succeeded' | 'failed' }[];
}

/** `tracking.json` after a failed try: the next archive of the campaign (or a re-run) retries it. */
export interface TrackingFailureRecord {
  tracker: 'mlflow';
  outcome: 'failed';
  uri: string;
  error: string;
  at: string;
}

async function writeRecord(manifestPath: string, record: TrackingRecord | TrackingFailureRecord) {
  const path = trackingRecordPath(manifestPath);
  await writeFile(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

async function trackingFailed(manifestPath: string): Promise<boolean> {
  const text = await readIfExists(trackingRecordPath(manifestPath));
  if (!text) return false;
  try {
    return (JSON.parse(text.toString('utf8')) as { outcome?: string }).outcome === 'failed';
  } catch {
    return false;
  }
}

/** The file next to a manifest recording where its run was tracked (the manifest is never rewritten). */
export const trackingRecordPath = (manifestPath: string) => join(dirname(manifestPath), 'tracking.json');

async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Upload what exists of `paths` (proxied artifact stores only); returns the names uploaded. */
async function uploadFiles(client: MlflowClient, artifactUri: string | undefined, paths: string[]) {
  const uploaded: string[] = [];
  for (const path of paths) {
    const body = await readIfExists(path);
    if (!body || !artifactUri) continue;
    const type = path.endsWith('.json')
      ? 'application/json'
      : path.endsWith('.html')
        ? 'text/html'
        : 'text/plain';
    if (await client.uploadArtifact(artifactUri, basename(path), body, type)) uploaded.push(basename(path));
  }
  return uploaded;
}

const artifactNote = (uri: string | undefined, uploaded: string[]) =>
  uploaded.length === 0 && uri && !uri.startsWith('mlflow-artifacts:')
    ? `artifacts not uploaded: the server stores them at ${uri}, not through its artifact proxy (run mlflow server with artifact serving)`
    : undefined;

/**
 * Tracks one finished experiment as an MLflow run (REST API 2.0, no Python): params from the
 * resolved spec (flattened, cut to MLflow's limits), tags (Temporal ids, image digest, Ray
 * versions, commits, outcome), the metrics series per step (`metrics-series.json`, when the train
 * activity wrote one) and the validation results, then the manifest (and metrics series,
 * validation results, report where they exist) as artifacts; the run ends FINISHED, FAILED or
 * KILLED by the outcome. Nested under the parent's run (campaign, sweep) by the
 * `mlflow.parentRunId` tag; a campaign's parent run also gets every attempt's metrics, so it has
 * one continuous step axis (steps are the trainer's global steps). Idempotent: the run is found by
 * its `ragen.workflowId` tag before one is created, and metric rows repeat exactly on a retry
 * (MLflow keeps one row per key, step, timestamp and value). Credentials come from the worker's
 * environment (MLFLOW_TRACKING_TOKEN, or MLFLOW_TRACKING_USERNAME/PASSWORD), never from the spec.
 * Profile quick (bounded retries); the workflow records a failure and keeps its outcome.
 */
export function createTrackMlflowRun(env: NodeJS.ProcessEnv = process.env) {
  const trackOne = trackOneRun(env);
  /**
   * A failed try leaves `tracking.json` saying failed (with the reason); a campaign attempt that
   * tracks fine then retries the earlier attempts of its campaign whose record says failed (their
   * run folders sit next to its own: `<campaign id>-a<N>`), into the same tracker. A retry that
   * fails again stays recorded as failed and does not fail this activity.
   */
  return async function trackMlflowRun(input: TrackRunInput): Promise<TrackingRecord> {
    let record: TrackingRecord;
    try {
      record = await trackOne(input);
    } catch (err) {
      await recordFailure(input.manifestPath, input.mlflow.uri, err);
      throw err;
    }
    const retried = await retryFailedAttempts(trackOne, input);
    if (retried.length === 0) return record;
    const withRetries = { ...record, retried };
    await writeRecord(input.manifestPath, withRetries);
    return withRetries;
  };
}

interface TrackRunInput {
  mlflow: MlflowTracking;
  workflowId: string;
  parentWorkflowId?: string;
  manifestPath: string;
}

async function retryFailedAttempts(
  trackOne: (input: TrackRunInput) => Promise<TrackingRecord>,
  input: TrackRunInput,
): Promise<NonNullable<TrackingRecord['retried']>> {
  const parent = input.parentWorkflowId;
  if (!parent) return [];
  const runs = dirname(dirname(input.manifestPath));
  const attemptOf = (name: string) =>
    name.startsWith(`${parent}-a`) && /^\d+$/.test(name.slice(parent.length + 2));
  const retried: NonNullable<TrackingRecord['retried']> = [];
  for (const workflowId of (await readdir(runs).catch(() => [] as string[])).filter(attemptOf).sort()) {
    if (workflowId === input.workflowId) continue;
    const manifestPath = join(runs, workflowId, basename(input.manifestPath));
    if (!(await trackingFailed(manifestPath))) continue;
    const again = { ...input, workflowId, manifestPath };
    try {
      await trackOne(again);
      retried.push({ workflowId, outcome: 'succeeded' });
    } catch (err) {
      await recordFailure(manifestPath, input.mlflow.uri, err);
      retried.push({ workflowId, outcome: 'failed' });
    }
  }
  return retried;
}

/** tracking.json says failed, with the reason; a write that fails too leaves the error to the caller. */
async function recordFailure(manifestPath: string, uri: string, err: unknown): Promise<void> {
  const failed: TrackingFailureRecord = {
    tracker: 'mlflow',
    outcome: 'failed',
    uri,
    error: err instanceof Error ? err.message : String(err),
    at: new Date().toISOString(),
  };
  await writeRecord(manifestPath, failed).catch(() => undefined);
}

function trackOneRun(env: NodeJS.ProcessEnv) {
  return async function trackOne(input: TrackRunInput): Promise<TrackingRecord> {
    const client = new MlflowClient(input.mlflow.uri, mlflowCredentialsFromEnv(env));
    const text = await readFile(input.manifestPath, 'utf8');
    const manifest = ManifestSchema.parse(JSON.parse(text));
    const sha256 = (await sha256OfFile(input.manifestPath)) ?? '';
    const runDir = dirname(input.manifestPath);
    const seriesText = await readIfExists(metricsSeriesPath(runDir));
    const series = seriesText
      ? MetricsSeriesSchema.parse(JSON.parse(seriesText.toString('utf8')))
      : undefined;
    const at = Date.parse(manifest.writtenAt) || 0;
    const metrics = seriesMetrics(series, at);

    const experimentId = await client.experimentId(input.mlflow.experiment);
    const parent = input.parentWorkflowId
      ? await findOrCreateRun(client, {
          experimentId,
          workflowId: input.parentWorkflowId,
          runName: input.parentWorkflowId,
          tags: [],
        })
      : undefined;
    const run = await findOrCreateRun(client, {
      experimentId,
      workflowId: input.workflowId,
      runName: input.workflowId,
      tags: [
        ...tag(TAGS.kind, 'experiment'),
        ...tag(TAGS.parentWorkflowId, input.parentWorkflowId),
        ...tag(TAGS.mlflowParent, parent?.info.run_id),
      ],
    });
    const runId = run.info.run_id;
    await logAll(client, runId, {
      params: flattenParams(manifest.resolvedSpec),
      tags: manifestTags(manifest, input.manifestPath, sha256),
      metrics: [...metrics, ...validationMetrics(manifest, at)],
    });
    if (parent && tagOf(parent, TAGS.kind) === 'campaign')
      await logAll(client, parent.info.run_id, { metrics });
    const artifactUri = run.info.artifact_uri ?? (await client.getRun(runId)).info.artifact_uri;
    const artifacts = await uploadFiles(client, artifactUri, [
      input.manifestPath,
      metricsSeriesPath(runDir),
      join(runDir, 'validation.json'),
      join(runDir, 'report.html'),
    ]);
    await client.updateRun(runId, runStatusOf(manifest.outcome), Date.now());
    const record: TrackingRecord = {
      tracker: 'mlflow',
      outcome: 'succeeded',
      uri: input.mlflow.uri,
      experimentId,
      runId,
      parentRunId: parent?.info.run_id,
      artifacts,
      calls: client.calls,
      note: artifactNote(artifactUri, artifacts),
    };
    await writeRecord(input.manifestPath, record);
    return record;
  };
}

/**
 * A campaign's or sweep's own MLflow run, the parent its attempts or children nest under. Called
 * at the start (`ending` absent: find or create it, log the spec as params) and at the end (tags
 * outcome and reason, the campaign or sweep manifest files as artifacts, the final status).
 * Idempotent like trackMlflowRun (found by the `ragen.workflowId` tag); profile quick.
 */
export function createTrackMlflowParent(env: NodeJS.ProcessEnv = process.env) {
  return async function trackMlflowParent(input: {
    mlflow: MlflowTracking;
    kind: 'campaign' | 'sweep';
    workflowId: string;
    temporalRunId: string;
    name: string;
    /** The spec as given (campaign budgets or sweep parameters included): logged once as params. */
    spec: unknown;
    ending?: { outcome: string; reason?: string; files: string[] };
  }): Promise<TrackingRecord> {
    const client = new MlflowClient(input.mlflow.uri, mlflowCredentialsFromEnv(env));
    const experimentId = await client.experimentId(input.mlflow.experiment);
    const run = await findOrCreateRun(client, {
      experimentId,
      workflowId: input.workflowId,
      runName: input.workflowId,
      tags: [...tag(TAGS.kind, input.kind), ...tag('ragen.name', input.name)],
    });
    const runId = run.info.run_id;
    const { ending } = input;
    // A child that found no parent run created a bare one: the kind tag makes it the campaign's.
    await logAll(client, runId, {
      params: ending ? [] : flattenParams(input.spec),
      tags: [
        ...tag(TAGS.kind, input.kind),
        ...tag('ragen.name', input.name),
        ...tag(TAGS.runId, input.temporalRunId),
        ...tag(TAGS.outcome, ending?.outcome),
        ...tag('ragen.reason', ending?.reason),
      ],
    });
    let artifacts: string[] = [];
    let note: string | undefined;
    if (ending) {
      const artifactUri = run.info.artifact_uri ?? (await client.getRun(runId)).info.artifact_uri;
      artifacts = await uploadFiles(client, artifactUri, ending.files);
      note = artifactNote(artifactUri, artifacts);
      await client.updateRun(runId, runStatusOf(ending.outcome), Date.now());
    }
    return {
      tracker: 'mlflow',
      outcome: 'succeeded',
      uri: input.mlflow.uri,
      experimentId,
      runId,
      artifacts,
      calls: client.calls,
      note,
    };
  };
}
