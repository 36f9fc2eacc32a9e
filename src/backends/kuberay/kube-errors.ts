import { type DomainError, permanent, transient } from '../../errors/domain-error.js';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { classifyExternalFailure, observedOf, verdictOfStatus } from '../../errors/external-failures.js';

/** What a request was doing, for messages that name the missing verb, resource and field. */
export interface KubeAction {
  verb: string;
  resource: string;
  namespace?: string;
  name?: string;
}

interface KubeStatusBody {
  message?: string;
  reason?: string;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

/** An answer the caller handles itself (404, 409): everything else goes through kubeFailure. */
export class KubeStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: KubeStatusBody,
    message: string,
  ) {
    super(message);
    this.name = 'KubeStatusError';
  }
}

/** HTTP status and body of a client-node ApiException (its body may be parsed or raw text). */
export function statusOf(err: unknown): { status: number; body: KubeStatusBody } | undefined {
  if (err instanceof KubeStatusError) return { status: err.status, body: err.body };
  const e = err as { code?: unknown; body?: unknown };
  if (typeof e?.code !== 'number') return undefined;
  let body: unknown = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = { message: body };
    }
  }
  return { status: e.code, body: (body ?? {}) as KubeStatusBody };
}

function where(a: KubeAction): string {
  return `${a.resource}${a.name ? `/${a.name}` : ''}${a.namespace ? ` in namespace ${a.namespace}` : ''}`;
}

/**
 * The one place where Kubernetes answers become error types; which are transient is said by
 * EXTERNAL_FAILURE_RULES. 401/403: KubePermissionDenied (non-retryable, names the verb and resource
 * to grant); 422 and other 4xx: KubeInvalidObject (non-retryable, names the field); 408, 429, 5xx
 * and network errors: KubeApiUnavailable (transient, retried with the activity's backoff).
 */
export function kubeFailure(err: unknown, action: KubeAction, identity = 'this identity'): DomainError {
  const s = statusOf(err);
  if (!s) {
    // No HTTP answer at all (refused, reset, DNS, TLS, timeout): the API server may be restarting.
    const { code } = observedOf(err);
    const known = classifyExternalFailure(err).verdict === 'transient' ? ` [${code}]` : '';
    return transient(
      TransientErrorTypes.KubeApiUnavailable,
      `Kubernetes API unreachable while trying to ${action.verb} ${where(action)}${known}: ${(err as Error)?.message ?? String(err)} (retried)`,
      undefined,
      err,
    );
  }
  const serverMessage = s.body.message ?? '';
  if (s.status === 401) {
    return permanent(
      ErrorTypes.KubePermissionDenied,
      `Kubernetes API refused the credentials (401) for ${action.verb} ${where(action)}; check the kubeconfig (KUBECONFIG) or the service account token. ${serverMessage}`,
    );
  }
  if (s.status === 403) {
    return permanent(
      ErrorTypes.KubePermissionDenied,
      `missing permission: ${identity} cannot ${action.verb} ${where(action)}; grant verb "${action.verb}" on resource "${action.resource}" with a Role and RoleBinding. Server said: ${serverMessage}`,
    );
  }
  if (verdictOfStatus(s.status) === 'transient') {
    return transient(
      TransientErrorTypes.KubeApiUnavailable,
      `Kubernetes API answered ${s.status} to ${action.verb} ${where(action)} (retried): ${serverMessage}`,
    );
  }
  const fields = (s.body.details?.causes ?? []).map(
    (c) => `${c.field ?? '(object)'}: ${c.message ?? c.reason ?? ''}`,
  );
  return permanent(
    ErrorTypes.KubeInvalidObject,
    `Kubernetes API rejected ${action.verb} ${where(action)} (${s.status} ${s.body.reason ?? ''})${fields.length ? `: ${fields.join('; ')}` : `: ${serverMessage}`}`,
  );
}
