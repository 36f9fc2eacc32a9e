/**
 * The one table that says which failures of an external service are worth retrying: the Ray
 * dashboard (jobs, nodes, logs, packages, version), the Kubernetes API, OCI registries, MLflow and
 * notification webhooks all decide through it. Transient: the service may answer differently in a
 * moment (no answer, a refused or broken connection, 408, 429, 5xx); retried with backoff inside
 * the activity while it heartbeats, then by the activity's retry policy. Permanent: an answer that
 * cannot change (another 4xx, a malformed answer); never retried.
 */

export type Verdict = 'transient' | 'permanent';

/** What a failed call showed: an HTTP status, or a network error code, or a malformed answer. */
export interface Observed {
  status?: number;
  code?: string;
  /** The answer's text, where a status alone does not say enough (Ray's duplicate submission). */
  body?: string;
  /** The answer came but could not be read (invalid JSON, a schema mismatch). */
  malformed?: boolean;
  /** What exists contradicts what was asked (a Ray job with our id but another entrypoint). */
  conflict?: boolean;
}

export interface FailureRule {
  /** What a reader of a log calls it. */
  name: string;
  verdict: Verdict;
  matches(o: Observed): boolean;
}

/** No answer within the client's deadline: our own timeout, undici's, or AbortSignal.timeout. */
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'TimeoutError',
]);
const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Ray's answer to a submission id used before (HTTP 500; see notes/pitfalls.md). */
export const RAY_DUPLICATE_SUBMISSION = /different submission_id|already exists/i;

/** First matching row wins: Ray's duplicate before the 5xx row, 408/429 before the 4xx row. */
export const EXTERNAL_FAILURE_RULES: readonly FailureRule[] = [
  {
    name: 'Ray submission id already used',
    verdict: 'permanent',
    matches: (o) => o.status === 500 && RAY_DUPLICATE_SUBMISSION.test(o.body ?? ''),
  },
  { name: 'exists with other parameters', verdict: 'permanent', matches: (o) => o.conflict === true },
  { name: 'no answer in time', verdict: 'transient', matches: (o) => TIMEOUT_CODES.has(o.code ?? '') },
  { name: 'connection refused', verdict: 'transient', matches: (o) => o.code === 'ECONNREFUSED' },
  { name: 'connection reset', verdict: 'transient', matches: (o) => RESET_CODES.has(o.code ?? '') },
  { name: 'host unreachable', verdict: 'transient', matches: (o) => UNREACHABLE_CODES.has(o.code ?? '') },
  { name: 'HTTP 408 request timeout', verdict: 'transient', matches: (o) => o.status === 408 },
  { name: 'HTTP 429 too many requests', verdict: 'transient', matches: (o) => o.status === 429 },
  {
    name: 'HTTP 5xx server error',
    verdict: 'transient',
    matches: (o) => o.status !== undefined && o.status >= 500,
  },
  {
    name: 'HTTP 4xx refusal',
    verdict: 'permanent',
    matches: (o) => o.status !== undefined && o.status >= 400 && o.status < 500,
  },
  { name: 'malformed answer', verdict: 'permanent', matches: (o) => o.malformed === true },
];

/**
 * Anything the table does not name (a bug of ours, an unknown error): never retried in place. The
 * activity boundary then decides as for any error (a DomainError as it says, a plain Error retried).
 */
export const UNCLASSIFIED: FailureRule = {
  name: 'not a service failure',
  verdict: 'permanent',
  matches: () => true,
};

export function classifyObserved(o: Observed): FailureRule {
  return EXTERNAL_FAILURE_RULES.find((r) => r.matches(o)) ?? UNCLASSIFIED;
}

/** The verdict for an HTTP status (the services' own clients name their error types from it). */
export function verdictOfStatus(status: number): Verdict {
  return classifyObserved({ status }).verdict;
}

/**
 * What an error object shows: `status` (our HTTP errors), a numeric `code` (client-node's
 * ApiException), a string `code` on it or on its `cause` (node:net, undici's `fetch failed`), or
 * the name TimeoutError (AbortSignal.timeout).
 */
export function observedOf(err: unknown): Observed {
  const e = err as {
    status?: unknown;
    body?: unknown;
    code?: unknown;
    name?: unknown;
    cause?: unknown;
    malformed?: unknown;
    conflict?: unknown;
  };
  if (e === null || typeof e !== 'object') return {};
  if (e.conflict === true) return { conflict: true };
  if (typeof e.status === 'number')
    return typeof e.body === 'string' ? { status: e.status, body: e.body } : { status: e.status };
  if (e.name === 'TimeoutError') return { code: 'TimeoutError' }; // a DOMException: its numeric code is no status
  if (typeof e.code === 'number' && e.code >= 100 && e.code < 600) return { status: e.code };
  if (e.malformed === true) return { malformed: true };
  if (typeof e.code === 'string') return { code: e.code };
  if (e.cause !== undefined && e.cause !== err) return observedOf(e.cause);
  return {};
}

/** The rule an error falls under. */
export function classifyExternalFailure(err: unknown): FailureRule {
  return classifyObserved(observedOf(err));
}

export function isTransientFailure(err: unknown): boolean {
  return classifyExternalFailure(err).verdict === 'transient';
}
