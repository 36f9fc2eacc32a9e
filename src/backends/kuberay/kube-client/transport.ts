import type { KubeConfig } from '@kubernetes/client-node';
import {
  ApiextensionsV1Api,
  ApisApi,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
} from '@kubernetes/client-node';
import {
  POLLING_CALLER,
  type RetryOptions,
  RetriesExhausted,
  retryTransient,
} from '../../../errors/retry-transient.js';
import { type KubeAction, KubeStatusError, kubeFailure, statusOf } from '../kube-errors.js';

/** The API groups a request is made with: handed out only inside KubeTransport.call. */
export interface KubeApis {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly authz: AuthorizationV1Api;
  readonly apiext: ApiextensionsV1Api;
  readonly apis: ApisApi;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Request options for a JSON merge patch (null removes a key). */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** True when the API answered one of `statuses` to a call that passed them through. */
export function answered(err: unknown, ...statuses: number[]): err is KubeStatusError {
  return err instanceof KubeStatusError && statuses.includes(err.status);
}

/**
 * The one way to the Kubernetes API: the only module that makes client-node's API objects, and it
 * lends them to a request only inside `call` (or opens a `watch` itself), so every request is
 * counted (the API budget is a reported number), retried in place when transient, and its failure
 * mapped to an error type in one place (kube-errors.ts). The resource clients beside it say what
 * to ask; this says how.
 */
export class KubeTransport {
  /** Requests sent to the API server, each try of a retried one included (a watch counts once, when opened). */
  requests = 0;
  /** Transient failures retried in place (EXTERNAL_FAILURE_RULES). */
  retries = 0;
  private readonly apis: KubeApis;
  private readonly watcher: Watch;

  /**
   * `retry`: how transient failures are retried in place; the worker passes waits that heartbeat.
   * The default retries none (a tool or test that wants the failure at once).
   */
  constructor(
    readonly kc: KubeConfig,
    readonly namespace: string,
    private readonly retry: Partial<RetryOptions> = POLLING_CALLER,
  ) {
    this.apis = {
      custom: kc.makeApiClient(CustomObjectsApi),
      core: kc.makeApiClient(CoreV1Api),
      authz: kc.makeApiClient(AuthorizationV1Api),
      apiext: kc.makeApiClient(ApiextensionsV1Api),
      apis: kc.makeApiClient(ApisApi),
    };
    this.watcher = new Watch(kc);
  }

  /** The kubeconfig user, for messages (the server's own message names the real identity). */
  get identity(): string {
    return `kubeconfig user "${this.kc.getCurrentUser()?.name ?? '?'}"`;
  }

  /**
   * One request: counted per try, retried while transient, its failure mapped by kubeFailure. The
   * statuses in `passThrough` (a 404 or 409 the caller expects) come back as KubeStatusError, unretried.
   */
  async call<T>(
    action: KubeAction,
    request: (apis: KubeApis) => Promise<T>,
    passThrough: readonly number[] = [],
  ): Promise<T> {
    const handled = (err: unknown) => passThrough.includes(statusOf(err)?.status ?? 0);
    try {
      return await retryTransient(
        `${action.verb} ${action.resource}`,
        () => {
          this.requests++;
          return request(this.apis);
        },
        {
          ...this.retry,
          handledByCaller: handled,
          onRetry: (event) => {
            this.retries++;
            this.retry.onRetry?.(event);
          },
        },
      );
    } catch (thrown) {
      const err = thrown instanceof RetriesExhausted ? thrown.last : thrown;
      const s = statusOf(err);
      if (s && passThrough.includes(s.status))
        throw new KubeStatusError(s.status, s.body, s.body.message ?? `HTTP ${s.status}`);
      throw kubeFailure(err, action, this.identity);
    }
  }

  /** A read that answers undefined on 404 (the object does not exist). */
  async found<T>(action: KubeAction, request: (apis: KubeApis) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.call(action, request, [404]);
    } catch (err) {
      if (answered(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * Watch `path` from a resourceVersion (counted once, not retried). Resolves once the stream is
   * open; `onDone` runs when it ends (server timeout, API server restart, network): the caller
   * re-lists and re-watches.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent<unknown>) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    this.requests++;
    return this.watcher.watch(
      path,
      query,
      (type, object) => onEvent({ type: type as WatchEvent<unknown>['type'], object }),
      onDone,
    );
  }
}
