import type { Manifest } from '../../domain/run/manifest.js';
import type { MetricsSeries } from '../../domain/train/metrics-series.js';
import { MLFLOW_LIMITS, type MlflowMetric, type MlflowRunStatus, type MlflowTag } from './client.js';

/** Tag keys the orchestrator sets; `ragen.workflowId` is how a retried activity finds its run. */
export const TAGS = {
  workflowId: 'ragen.workflowId',
  runId: 'ragen.temporalRunId',
  kind: 'ragen.kind',
  parentWorkflowId: 'ragen.parentWorkflowId',
  outcome: 'ragen.outcome',
  mlflowParent: 'mlflow.parentRunId',
  mlflowRunName: 'mlflow.runName',
} as const;

/** Spec sections never sent to a tracker: notification URLs may carry a receiver's secret path. */
const NOT_PARAMS = new Set(['notify']);

const truncate = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 3)}...`);

/** `trainer.overrides.algorithm.lr` style keys; arrays by index; values cut to MLflow's limits. */
export function flattenParams(value: unknown, prefix = ''): MlflowTag[] {
  const out: MlflowTag[] = [];
  const walk = (v: unknown, key: string) => {
    if (v === undefined) return;
    if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      if (entries.length === 0) out.push({ key, value: Array.isArray(v) ? '[]' : '{}' });
      for (const [k, x] of entries) {
        if (key === '' && NOT_PARAMS.has(k)) continue;
        walk(x, key ? `${key}.${k}` : k);
      }
      return;
    }
    out.push({ key, value: String(v) });
  };
  walk(value, prefix);
  return out
    .filter((p) => p.key.length <= MLFLOW_LIMITS.keyLength)
    .map((p) => ({ key: p.key, value: truncate(p.value, MLFLOW_LIMITS.paramValueLength) }));
}

export function tag(key: string, value: string | number | undefined): MlflowTag[] {
  return value === undefined || value === ''
    ? []
    : [{ key, value: truncate(String(value), MLFLOW_LIMITS.tagValueLength) }];
}

/** Provenance as tags: image digest, Ray versions, commits, outcome, the manifest's place. */
export function manifestTags(m: Manifest, manifestPath: string, sha256: string): MlflowTag[] {
  const { image, commits } = m;
  const trained = commits?.trainedCode;
  return [
    ...tag(TAGS.runId, m.temporal.runId),
    ...tag('ragen.namespace', m.temporal.namespace),
    ...tag(TAGS.outcome, m.outcome),
    ...tag('ragen.image.ref', image.ref),
    ...tag('ragen.image.digest', image.digest),
    ...tag('ragen.rayVersion.declared', m.rayVersion.declared),
    ...tag('ragen.rayVersion.observedOnHead', m.rayVersion.observedOnHead),
    ...tag('ragen.repoCommit', m.provenance.repoCommit),
    ...tag('ragen.commits.trainedCode', trained?.commit),
    ...tag('ragen.commits.trainedCode.from', trained?.from),
    ...tag('ragen.commits.ragen', trained?.ragenCommit),
    ...tag('ragen.commits.verl', trained?.verlCommit),
    ...tag('ragen.commits.orchestrator', commits?.orchestrator.commit),
    ...tag('mlflow.source.git.commit', trained?.commit ?? m.provenance.repoCommit),
    ...tag('ragen.backend', m.cluster.backend),
    ...tag('ragen.training.finalStep', m.training.finalStep),
    ...tag('ragen.training.error', m.training.error),
    ...tag('ragen.manifestPath', manifestPath),
    ...tag('ragen.manifestSha256', sha256),
  ];
}

/**
 * The series as MLflow metrics, every point at `timestamp` (the manifest's writtenAt): MLflow's
 * SQL store keeps one row per (key, timestamp, step, value), so a retried upload adds nothing.
 */
/**
 * A metric name MLflow accepts (alphanumerics, `_ - . : /` and spaces): RAGEN's `pass@16` becomes
 * `pass_at_16`, any other character `_`. Without this a log-batch holding one such name is refused.
 */
export function mlflowMetricKey(key: string): string {
  return key.replace(/@/g, '_at_').replace(/[^A-Za-z0-9_\-.:/ ]/g, '_');
}

export function seriesMetrics(series: MetricsSeries | undefined, timestamp: number): MlflowMetric[] {
  if (!series) return [];
  return series.points.flatMap((p) =>
    Object.entries(p.values)
      .map(([key, value]): [string, number] => [mlflowMetricKey(key), value])
      .filter(([key, value]) => Number.isFinite(value) && key.length <= MLFLOW_LIMITS.keyLength)
      .map(([key, value]) => ({ key, value, timestamp, step: p.step })),
  );
}

/** Validation results as metrics at the validated step (`validation/success_rate`, `validation/pass_at_k`). */
export function validationMetrics(m: Manifest, timestamp: number): MlflowMetric[] {
  const r = m.validation.result;
  if (!r) return [];
  const step = r.step;
  const values: [string, number | undefined][] = [
    ['validation/success_rate', r.success_rate],
    ['validation/mean_reward', r.mean_reward],
    ['validation/mean_actions', r.mean_actions],
    ['validation/episodes', r.episodes],
    ...Object.entries(r.pass_at_k ?? {}).map(([k, v]): [string, number] => [
      mlflowMetricKey(`validation/pass@${k}`),
      v,
    ]),
  ];
  return values.flatMap(([key, value]) =>
    value === undefined || !Number.isFinite(value) ? [] : [{ key, value, timestamp, step }],
  );
}

/** Split into log-batch requests within MLflow's per-request limits. */
export function batches(input: {
  metrics?: MlflowMetric[];
  params?: MlflowTag[];
  tags?: MlflowTag[];
}): { metrics: MlflowMetric[]; params: MlflowTag[]; tags: MlflowTag[] }[] {
  const out: { metrics: MlflowMetric[]; params: MlflowTag[]; tags: MlflowTag[] }[] = [];
  const params = [...(input.params ?? [])];
  const tags = [...(input.tags ?? [])];
  const metrics = [...(input.metrics ?? [])];
  while (params.length || tags.length || metrics.length) {
    const p = params.splice(0, MLFLOW_LIMITS.batchParams);
    const t = tags.splice(0, MLFLOW_LIMITS.batchTags);
    const room = Math.min(MLFLOW_LIMITS.batchMetrics, MLFLOW_LIMITS.batchEntities - p.length - t.length);
    out.push({ params: p, tags: t, metrics: metrics.splice(0, room) });
  }
  return out;
}

/** How an outcome ends an MLflow run. */
export function runStatusOf(outcome: string): MlflowRunStatus {
  if (outcome === 'succeeded' || outcome === 'earlyStopped') return 'FINISHED';
  if (outcome === 'cancelled' || outcome === 'paused') return 'KILLED';
  return 'FAILED';
}
