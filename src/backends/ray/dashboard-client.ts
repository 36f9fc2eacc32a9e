import type { RayNode } from '../../domain/cluster/cluster.js';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { DomainError, transient } from '../../errors/domain-error.js';
import { RAY_DUPLICATE_SUBMISSION } from '../../errors/external-failures.js';
import { type RetryOptions, RetriesExhausted, retryTransient } from '../../errors/retry-transient.js';
import { followBytes, RayHttpError, requestJson } from './http.js';

/** How often Ray's log agent looks for new bytes at the end of a followed log. */
export const LOG_FOLLOW_INTERVAL_S = 0.25;

export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export interface RayJobInfo {
  submissionId: string;
  status: RayJobStatus;
  message: string;
  /** The entrypoint's exit code once it ended (JobInfo.driver_exit_code; absent before Ray 2.7 or while running). */
  driverExitCode?: number;
  /** The node whose log directory holds the driver log (JobInfo.driver_node_id; absent until the driver starts). */
  driverNodeId?: string;
}

interface NodesResponse {
  data: {
    result: {
      result: {
        node_id: string;
        node_ip: string;
        is_head_node: boolean;
        state: string;
        resources_total?: Record<string, number>;
      }[];
    };
  };
}

/** What activities use of a Ray head; tests hand in fakes of this type. */
export interface RayHeadApi {
  rayVersion(): Promise<string>;
  nodes(): Promise<RayNode[]>;
  /**
   * `pyModules`: package URIs (`gcs://_ray_pkg_….zip`) put on the job's PYTHONPATH (runtime_env.py_modules).
   * `workingDir`: a package URI unpacked as the job's cwd (runtime_env.working_dir: the spec's `code`).
   */
  submitJob(
    submissionId: string,
    entrypoint: string,
    envVars: Record<string, string>,
    pyModules?: readonly string[],
    workingDir?: string,
  ): Promise<{ created: boolean }>;
  /** Whether the head's GCS holds the package `_ray_pkg_<hash>.zip` (GET /api/packages/gcs/<name>). */
  packageExists(name: string): Promise<boolean>;
  /** PUT /api/packages/gcs/<name>: store a package for runtime_env URIs. */
  uploadPackage(name: string, bytes: Buffer): Promise<void>;
  job(submissionId: string): Promise<RayJobInfo | undefined>;
  jobLogs(submissionId: string): Promise<string>;
  /** Follow the driver log from its start: every byte once, as it is written (onEnd when the stream stops). */
  followJobLog(
    submissionId: string,
    driverNodeId: string,
    onData: (chunk: Buffer) => void,
    onEnd: (err?: Error) => void,
  ): Promise<{ close(): void }>;
  stopJob(submissionId: string): Promise<void>;
}

/**
 * The Ray head's HTTP API, the same on the local backend and on KubeRay: versions, joined nodes
 * (`/api/v0/nodes`) and the Ray Jobs REST API.
 */
export class RayDashboardClient implements RayHeadApi {
  /**
   * `token`: the cluster's Ray auth token (RAY_AUTH_MODE=token), sent on every call; private so it
   * is never logged with the client. `retry`: how transient failures are retried in place (an
   * activity passes a wait that heartbeats); `{ budgetMs: 0 }` for a caller that polls anyway.
   */
  constructor(
    readonly baseUrl: string,
    token?: string,
    retry: Partial<RetryOptions> = {},
  ) {
    this.#token = token;
    this.#retry = { ...retry, handledByCaller: isDuplicateSubmission };
  }

  readonly #token: string | undefined;
  readonly #retry: Partial<RetryOptions>;

  /**
   * Every request: transient failures (EXTERNAL_FAILURE_RULES) retried in place; when the budget
   * runs out, a transient RayDashboardUnavailable that the activity's retry policy takes over.
   */
  private async call<T>(path: string, init: Parameters<typeof requestJson>[1] = {}): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const what = `${init.method ?? 'GET'} ${path.split('?')[0]}`;
    try {
      return await retryTransient(
        what,
        () => requestJson<T>(url, { ...init, token: this.#token }),
        this.#retry,
      );
    } catch (err) {
      if (!(err instanceof RetriesExhausted)) throw err;
      throw transient(TransientErrorTypes.RayDashboardUnavailable, err.message, { what }, err.last);
    }
  }

  async rayVersion(): Promise<string> {
    const body = await this.call<{ ray_version: string }>(`/api/version`, {
      timeoutMs: 5_000,
    });
    return body.ray_version;
  }

  async nodes(): Promise<RayNode[]> {
    const body = await this.call<NodesResponse>(`/api/v0/nodes?limit=1000`);
    return body.data.result.result.map((n) => ({
      nodeId: n.node_id,
      ip: n.node_ip,
      isHead: n.is_head_node,
      alive: n.state === 'ALIVE',
      gpus: n.resources_total?.['GPU'] ?? 0,
    }));
  }

  /**
   * Submit once: a retried submit with the same id finds the job that exists (Ray answers 500 with
   * "Please use a different submission_id" for a duplicate; see notes/pitfalls.md). A POST that
   * timed out may still have made the job, so this is what makes a retry safe. A job with our id
   * but another entrypoint is refused for good (RayJobConflict): never a second driver.
   */
  async submitJob(
    submissionId: string,
    entrypoint: string,
    envVars: Record<string, string>,
    pyModules: readonly string[] = [],
    workingDir?: string,
  ): Promise<{ created: boolean }> {
    // Probes travel as py_modules, never working_dir: a working_dir becomes the job's cwd, and
    // `python train.py` needs the image's, unless the spec ships the tree that holds train.py (`code`).
    const runtimeEnv = {
      env_vars: envVars,
      ...(pyModules.length > 0 ? { py_modules: pyModules } : {}),
      ...(workingDir ? { working_dir: workingDir } : {}),
    };
    try {
      await this.call(`/api/jobs/`, {
        method: 'POST',
        body: { entrypoint, submission_id: submissionId, runtime_env: runtimeEnv, entrypoint_num_cpus: 0 },
      });
      return { created: true };
    } catch (err) {
      if (!isDuplicateSubmission(err)) throw err;
      const existing = await this.call<{ entrypoint?: string }>(
        `/api/jobs/${encodeURIComponent(submissionId)}`,
      );
      if (existing.entrypoint !== undefined && existing.entrypoint !== entrypoint) {
        throw new RayJobConflict(submissionId, this.baseUrl, existing.entrypoint);
      }
      return { created: false };
    }
  }

  async packageExists(name: string): Promise<boolean> {
    try {
      await this.call(`/api/packages/gcs/${encodeURIComponent(name)}`);
      return true;
    } catch (err) {
      if (err instanceof RayHttpError && err.status === 404) return false;
      throw err;
    }
  }

  async uploadPackage(name: string, bytes: Buffer): Promise<void> {
    await this.call(`/api/packages/gcs/${encodeURIComponent(name)}`, {
      method: 'PUT',
      bytes,
      // A shipped tree may be 100s of MB: a minute, plus a second a MB (a slow link to the cluster).
      timeoutMs: 60_000 + Math.ceil(bytes.length / 1e6) * 1000,
    });
  }

  /** undefined when no job with this id exists. */
  async job(submissionId: string): Promise<RayJobInfo | undefined> {
    try {
      const body = await this.call<{
        status: RayJobStatus;
        message?: string;
        driver_exit_code?: number | null;
        driver_node_id?: string | null;
      }>(`/api/jobs/${encodeURIComponent(submissionId)}`);
      const info: RayJobInfo = { submissionId, status: body.status, message: body.message ?? '' };
      if (typeof body.driver_exit_code === 'number') info.driverExitCode = body.driver_exit_code;
      if (body.driver_node_id) info.driverNodeId = body.driver_node_id;
      return info;
    } catch (err) {
      if (err instanceof RayHttpError && err.status === 404) return undefined;
      throw err;
    }
  }

  async jobLogs(submissionId: string): Promise<string> {
    const body = await this.call<{ logs: string }>(`/api/jobs/${encodeURIComponent(submissionId)}/logs`, {
      timeoutMs: 20_000,
    });
    return body.logs;
  }

  /**
   * Follow the driver log from byte 0 through Ray's State API on the driver's node
   * (`/api/v0/logs/stream?node_id&filename=job-driver-<id>.log&lines=-1&interval=…`: the agent
   * reads the file to its end, then again every interval). By node id and file name: Ray 2.60
   * refuses `submission_id` alone (its options check wants a node). The promise settles when the
   * head answered (a log not written yet is a RayHttpError 500 naming the missing file).
   */
  followJobLog(
    submissionId: string,
    driverNodeId: string,
    onData: (chunk: Buffer) => void,
    onEnd: (err?: Error) => void,
  ): Promise<{ close(): void }> {
    const query = new URLSearchParams({
      node_id: driverNodeId,
      filename: `job-driver-${submissionId}.log`,
      lines: '-1',
      interval: String(LOG_FOLLOW_INTERVAL_S),
    });
    return followBytes(
      `${this.baseUrl}/api/v0/logs/stream?${query.toString()}`,
      onData,
      onEnd,
      undefined,
      this.#token,
    );
  }

  async stopJob(submissionId: string): Promise<void> {
    try {
      await this.call(`/api/jobs/${encodeURIComponent(submissionId)}/stop`, {
        method: 'POST',
      });
    } catch (err) {
      if (err instanceof RayHttpError && err.status === 404) return;
      throw err;
    }
  }
}

/** Our submission id, another entrypoint: the failure table's "exists with other parameters" (permanent). */
export class RayJobConflict extends DomainError {
  readonly conflict = true;
  constructor(submissionId: string, baseUrl: string, existing: string) {
    super({
      type: ErrorTypes.RayJobConflict,
      permanent: true,
      message:
        `Ray job ${submissionId} exists on ${baseUrl} with another entrypoint (${existing.slice(0, 200)}); ` +
        `not submitting a second driver. Stop or delete that job, or run under a new workflow id`,
    });
  }
}

function isDuplicateSubmission(err: unknown): boolean {
  return err instanceof RayHttpError && err.status === 500 && RAY_DUPLICATE_SUBMISSION.test(err.body);
}

export const TERMINAL_JOB_STATES: ReadonlySet<RayJobStatus> = new Set(['STOPPED', 'SUCCEEDED', 'FAILED']);
