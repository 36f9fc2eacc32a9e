import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { permanent, transient } from '../../errors/domain-error.js';
import { verdictOfStatus } from '../../errors/external-failures.js';

/** MLflow's own limits (mlflow/utils/validation.py, MLflow 3.17): larger values are refused. */
export const MLFLOW_LIMITS = {
  keyLength: 250,
  paramValueLength: 6000,
  tagValueLength: 8000,
  /** log-batch: at most this many metrics, params and tags per request... */
  batchMetrics: 1000,
  batchParams: 100,
  batchTags: 100,
  /** ...and this many of them together. */
  batchEntities: 1000,
} as const;

export interface MlflowTag {
  key: string;
  value: string;
}
export interface MlflowMetric {
  key: string;
  value: number;
  timestamp: number;
  step: number;
}
export interface MlflowRunInfo {
  run_id: string;
  experiment_id: string;
  artifact_uri?: string;
  status?: string;
}
export interface MlflowRun {
  info: MlflowRunInfo;
  data?: { tags?: MlflowTag[]; params?: MlflowTag[]; metrics?: MlflowMetric[] };
}
export type MlflowRunStatus = 'RUNNING' | 'FINISHED' | 'FAILED' | 'KILLED';

/** Credentials from the worker's environment (never the spec): a bearer token or basic auth. */
export interface MlflowCredentials {
  token?: string;
  username?: string;
  password?: string;
}

export function mlflowCredentialsFromEnv(env: NodeJS.ProcessEnv): MlflowCredentials {
  return {
    token: env.MLFLOW_TRACKING_TOKEN || undefined,
    username: env.MLFLOW_TRACKING_USERNAME || undefined,
    password: env.MLFLOW_TRACKING_PASSWORD || undefined,
  };
}

/** A filter-string literal: MLflow's search grammar quotes with ' (and accepts " around a value with ' in it). */
const literal = (value: string) => (value.includes("'") ? `"${value}"` : `'${value}'`);

/**
 * A small client for MLflow's REST API 2.0 (plain fetch). Every response status maps to an error
 * type here: 5xx, 408, 429 and unreachable servers are TrackerUnavailable (retried by the
 * activity's policy), other refusals TrackerRejected. Counts its calls (the issue asks how many a
 * run costs).
 */
export class MlflowClient {
  calls = 0;
  private readonly base: string;
  private readonly auth?: string;

  constructor(
    uri: string,
    credentials: MlflowCredentials = {},
    private readonly timeoutMs = 15_000,
  ) {
    this.base = uri.replace(/\/+$/, '');
    if (credentials.token) this.auth = `Bearer ${credentials.token}`;
    else if (credentials.username !== undefined)
      this.auth = `Basic ${Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64')}`;
  }

  /** The experiment's id, created when it does not exist (a concurrent create is read back). */
  async experimentId(name: string): Promise<string> {
    const found = await this.experimentByName(name);
    if (found) return found;
    try {
      const r = await this.request<{ experiment_id: string }>('POST', 'mlflow/experiments/create', { name });
      return r.experiment_id;
    } catch (err) {
      const again = await this.experimentByName(name);
      if (again) return again;
      throw err;
    }
  }

  private async experimentByName(name: string): Promise<string | undefined> {
    const r = await this.request<{ experiment?: { experiment_id: string; lifecycle_stage?: string } }>(
      'GET',
      `mlflow/experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
      undefined,
      [404],
    );
    if (r.experiment?.lifecycle_stage === 'deleted')
      throw permanent(
        ErrorTypes.TrackerRejected,
        `MLflow experiment "${name}" is deleted; restore it (mlflow experiments restore) or name another in tracking.mlflow.experiment`,
      );
    return r.experiment?.experiment_id;
  }

  /** Active runs of the experiment whose tag `key` equals `value`, oldest first. */
  async runsByTag(experimentId: string, key: string, value: string): Promise<MlflowRun[]> {
    const r = await this.request<{ runs?: MlflowRun[] }>('POST', 'mlflow/runs/search', {
      experiment_ids: [experimentId],
      filter: `tags.\`${key}\` = ${literal(value)}`,
      run_view_type: 'ACTIVE_ONLY',
      max_results: 1000,
      order_by: ['attributes.start_time ASC'],
    });
    return r.runs ?? [];
  }

  async createRun(init: {
    experimentId: string;
    runName: string;
    startTime: number;
    tags: MlflowTag[];
  }): Promise<MlflowRunInfo> {
    const r = await this.request<{ run: MlflowRun }>('POST', 'mlflow/runs/create', {
      experiment_id: init.experimentId,
      run_name: init.runName,
      start_time: init.startTime,
      tags: init.tags,
    });
    return r.run.info;
  }

  async getRun(runId: string): Promise<MlflowRun> {
    const r = await this.request<{ run: MlflowRun }>(
      'GET',
      `mlflow/runs/get?run_id=${encodeURIComponent(runId)}`,
    );
    return r.run;
  }

  async updateRun(runId: string, status: MlflowRunStatus, endTime?: number): Promise<void> {
    await this.request('POST', 'mlflow/runs/update', { run_id: runId, status, end_time: endTime });
  }

  async setTag(runId: string, tag: MlflowTag): Promise<void> {
    await this.request('POST', 'mlflow/runs/set-tag', { run_id: runId, ...tag });
  }

  /** One log-batch call; the caller keeps within MLFLOW_LIMITS (see batches()). */
  async logBatch(
    runId: string,
    batch: { metrics?: MlflowMetric[]; params?: MlflowTag[]; tags?: MlflowTag[] },
  ): Promise<void> {
    await this.request('POST', 'mlflow/runs/log-batch', { run_id: runId, ...batch });
  }

  /** Every value of one metric (for tests and readers). */
  async metricHistory(runId: string, key: string): Promise<MlflowMetric[]> {
    const r = await this.request<{ metrics?: MlflowMetric[] }>(
      'GET',
      `mlflow/metrics/get-history?run_id=${encodeURIComponent(runId)}&metric_key=${encodeURIComponent(key)}&max_results=25000`,
    );
    return r.metrics ?? [];
  }

  /**
   * Upload one file through the server's artifact proxy (`mlflow server` serves artifacts by
   * default since 2.0): the run's artifact_uri is `mlflow-artifacts:/<path>`, uploaded with
   * PUT /api/2.0/mlflow-artifacts/artifacts/<path>/<name>. Returns false where the server does not
   * proxy artifacts (another scheme: the client would need that store's credentials).
   */
  async uploadArtifact(
    artifactUri: string,
    name: string,
    body: Buffer,
    contentType: string,
  ): Promise<boolean> {
    const m = /^mlflow-artifacts:(?:\/\/[^/]*)?\/(.*)$/.exec(artifactUri);
    if (!m) return false;
    const path = `${m[1]!.replace(/\/+$/, '')}/${name}`.split('/').map(encodeURIComponent).join('/');
    await this.request('PUT', `mlflow-artifacts/artifacts/${path}`, body, [], contentType);
    return true;
  }

  async downloadArtifact(artifactUri: string, name: string): Promise<string> {
    const m = /^mlflow-artifacts:(?:\/\/[^/]*)?\/(.*)$/.exec(artifactUri);
    if (!m) throw new Error(`not a proxied artifact uri: ${artifactUri}`);
    const res = await this.fetch('GET', `mlflow-artifacts/artifacts/${m[1]}/${name}`);
    return res.text();
  }

  private async fetch(method: string, path: string, body?: unknown, contentType?: string): Promise<Response> {
    this.calls++;
    const url = `${this.base}/api/2.0/${path}`;
    const headers: Record<string, string> = {};
    if (this.auth) headers.authorization = this.auth;
    let payload: string | Uint8Array | undefined;
    if (Buffer.isBuffer(body)) {
      payload = new Uint8Array(body);
      headers['content-type'] = contentType ?? 'application/octet-stream';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    try {
      return await fetch(url, {
        method,
        headers,
        body: payload,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw transient(
        TransientErrorTypes.TrackerUnavailable,
        `MLflow at ${this.base} did not answer ${method} ${path.split('?')[0]}: ${(err as Error).message}`,
      );
    }
  }

  private async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    allowed: number[] = [],
    contentType?: string,
  ): Promise<T> {
    const res = await this.fetch(method, path, body, contentType);
    const text = await res.text();
    if (!res.ok && !allowed.includes(res.status)) {
      const what = `MLflow ${method} ${path.split('?')[0]} answered ${res.status}: ${text.slice(0, 300)}`;
      if (verdictOfStatus(res.status) === 'transient')
        throw transient(TransientErrorTypes.TrackerUnavailable, what);
      const fix =
        res.status === 401 || res.status === 403
          ? " (set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD in the worker's environment)"
          : '';
      throw permanent(ErrorTypes.TrackerRejected, `${what}${fix}`);
    }
    if (!res.ok || text.trim() === '') return {} as T;
    return JSON.parse(text) as T;
  }
}
