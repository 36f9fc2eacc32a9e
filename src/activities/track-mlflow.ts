import { readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ManifestSchema } from '../domain/manifest.js';
import { MetricsSeriesSchema } from '../domain/metrics-series.js';
import { metricsSeriesPath } from '../domain/paths.js';
import type { MlflowTracking } from '../domain/tracking.js';
import { MlflowClient, mlflowCredentialsFromEnv } from '../tracking/mlflow/client.js';
import {
  TAGS,
  flattenParams,
  manifestTags,
  runStatusOf,
  seriesMetrics,
  tag,
  validationMetrics,
} from '../tracking/mlflow/records.js';
import { findOrCreateRun, logAll, tagOf } from '../tracking/mlflow/runs.js';
import { sha256OfFile } from './write-once.js';

/** What a tracking activity reports; the experiment also writes it to `tracking.json` by its manifest. */
export interface TrackingRecord {
  tracker: 'mlflow';
  uri: string;
  experimentId: string;
  runId: string;
  parentRunId?: string;
  artifacts: string[];
  /** REST calls this attempt made. */
  calls: number;
  note?: string;
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
  return async function trackMlflowRun(input: {
    mlflow: MlflowTracking;
    workflowId: string;
    parentWorkflowId?: string;
    manifestPath: string;
  }): Promise<TrackingRecord> {
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
      uri: input.mlflow.uri,
      experimentId,
      runId,
      parentRunId: parent?.info.run_id,
      artifacts,
      calls: client.calls,
      note: artifactNote(artifactUri, artifacts),
    };
    const path = trackingRecordPath(input.manifestPath);
    await writeFile(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    await rename(`${path}.tmp`, path);
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
      uri: input.mlflow.uri,
      experimentId,
      runId,
      artifacts,
      calls: client.calls,
      note,
    };
  };
}
