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
import { transient } from '../../errors/domain-error.js';
import {
  POLLING_CALLER,
  type RetryOptions,
  RetriesExhausted,
  retryTransient,
} from '../../errors/retry-transient.js';
import { TransientErrorTypes } from '../../domain/failures/error-types.js';
import { type KubeAction, KubeStatusError, kubeFailure, statusOf } from './kube-errors.js';
import type { PodLike } from './pod-failures.js';
import type { EventLike } from './probe-failures.js';
import { RAYCLUSTER, type RayClusterObject } from './raycluster.js';
import { WORKLOAD, type WorkloadObject } from './kueue-workloads.js';
import { type BackendLogger, quietLogger } from '../logger.js';
import type { SecretObject } from './auth-secret.js';
import type { ResourceRule } from './resource-rules.js';

/**
 * The one module that owns @kubernetes/client-node. Every request goes through `call`, which counts
 * it (the API budget is a reported number) and maps failures to error types in one place
 * (kube-errors.ts). 404 and 409 come back as KubeStatusError for the callers that expect them.
 */

/** Kubeconfig loading lives in kube-config.ts (in-cluster first in a Pod); re-exported for callers. */
export { loadKubeConfig } from './kube-config.js';

export type WatchEvent = {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: RayClusterObject;
};

/** The ConfigMap fields the product reads and writes. */
export interface ConfigMapObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** A Secret's name and owner marks, without its data. */
export interface SecretMarks {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
}

export class KubeApi {
  /** Requests sent to the API server (a watch counts once, when it is opened). */
  requests = 0;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly authz: AuthorizationV1Api;
  private readonly apiext: ApiextensionsV1Api;
  private readonly apis: ApisApi;
  private readonly watcher: Watch;

  /** Transient failures retried in place (EXTERNAL_FAILURE_RULES), counted. */
  retries = 0;

  /**
   * `retry`: how transient failures are retried in place; the worker passes waits that heartbeat.
   * The default retries none (a tool or test that wants the failure at once).
   */
  constructor(
    readonly kc: KubeConfig,
    readonly namespace: string,
    private readonly logger: BackendLogger = quietLogger,
    private readonly retry: Partial<RetryOptions> = POLLING_CALLER,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.authz = kc.makeApiClient(AuthorizationV1Api);
    this.apiext = kc.makeApiClient(ApiextensionsV1Api);
    this.apis = kc.makeApiClient(ApisApi);
    this.watcher = new Watch(kc);
  }

  /** The kubeconfig user, for messages (the server's own message names the real identity). */
  get identity(): string {
    return `kubeconfig user "${this.kc.getCurrentUser()?.name ?? '?'}"`;
  }

  private async call<T>(action: KubeAction, fn: () => Promise<T>, passThrough: number[] = []): Promise<T> {
    const handled = (err: unknown) => passThrough.includes(statusOf(err)?.status ?? 0);
    try {
      return await retryTransient(
        `${action.verb} ${action.resource}`,
        () => {
          this.requests++;
          return fn();
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

  private rc(verb: string, name?: string): KubeAction {
    return { verb, resource: `${RAYCLUSTER.plural}.${RAYCLUSTER.group}`, namespace: this.namespace, name };
  }

  private get rcParams() {
    return {
      group: RAYCLUSTER.group,
      version: RAYCLUSTER.version,
      namespace: this.namespace,
      plural: RAYCLUSTER.plural,
    };
  }

  /** Create; `created: false` with the existing object on 409 AlreadyExists. */
  async createRayCluster(body: RayClusterObject): Promise<{ created: boolean; object: RayClusterObject }> {
    try {
      const object = (await this.call(
        this.rc('create', body.metadata.name),
        () => this.custom.createNamespacedCustomObject({ ...this.rcParams, body }),
        [409],
      )) as RayClusterObject;
      return { created: true, object };
    } catch (err) {
      if (!(err instanceof KubeStatusError) || err.status !== 409) throw err;
      this.logger.info('RayCluster create answered 409 AlreadyExists; reading it back', {
        cluster: body.metadata.name,
      });
      const existing = await this.getRayCluster(body.metadata.name);
      if (!existing)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `RayCluster ${body.metadata.name} answered 409 AlreadyExists but is gone on read-back (being deleted?); retrying`,
        );
      return { created: false, object: existing };
    }
  }

  /** A GET that answers undefined on 404 (the object does not exist). */
  private async found<T>(action: KubeAction, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await this.call(action, fn, [404]);
    } catch (err) {
      if (err instanceof KubeStatusError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** undefined on 404. */
  async getRayCluster(name: string): Promise<RayClusterObject | undefined> {
    return (await this.found(this.rc('get', name), () =>
      this.custom.getNamespacedCustomObject({ ...this.rcParams, name }),
    )) as RayClusterObject | undefined;
  }

  /** Background propagation (pods go by garbage collection); `found: false` on 404. */
  async deleteRayCluster(name: string): Promise<{ found: boolean }> {
    try {
      await this.call(
        this.rc('delete', name),
        () =>
          this.custom.deleteNamespacedCustomObject({
            ...this.rcParams,
            name,
            propagationPolicy: 'Background',
          }),
        [404],
      );
      return { found: true };
    } catch (err) {
      if (err instanceof KubeStatusError && err.status === 404) return { found: false };
      throw err;
    }
  }

  async listRayClusters(labelSelector: string): Promise<RayClusterObject[]> {
    const list = (await this.call(this.rc('list'), () =>
      this.custom.listNamespacedCustomObject({ ...this.rcParams, labelSelector }),
    )) as { items: RayClusterObject[] };
    return list.items;
  }

  /**
   * Watch one RayCluster from a resourceVersion. Resolves once the stream is open; `onDone` runs
   * when it ends (server timeout, API server restart, network): the caller re-lists and re-watches.
   */
  async watchRayCluster(
    name: string,
    resourceVersion: string | undefined,
    onEvent: (e: WatchEvent) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    this.requests++;
    const path = `/apis/${RAYCLUSTER.group}/${RAYCLUSTER.version}/namespaces/${this.namespace}/${RAYCLUSTER.plural}`;
    return this.watcher.watch(
      path,
      {
        fieldSelector: `metadata.name=${name}`,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
      },
      (type, object) => onEvent({ type: type as WatchEvent['type'], object: object as RayClusterObject }),
      onDone,
    );
  }

  /** Pods KubeRay made for a cluster (label ray.io/cluster); they outlive the object until GC removes them. */
  async rayPods(cluster: string): Promise<number> {
    const list = await this.call({ verb: 'list', resource: 'pods', namespace: this.namespace }, () =>
      this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `ray.io/cluster=${cluster}` }),
    );
    return list.items.length;
  }

  /** The kubelet's probe-failure Events on Pods in the namespace (reason Unhealthy): one list call. */
  async listProbeEvents(): Promise<EventLike[]> {
    const list = await this.call({ verb: 'list', resource: 'events', namespace: this.namespace }, () =>
      this.core.listNamespacedEvent({
        namespace: this.namespace,
        fieldSelector: 'involvedObject.kind=Pod,reason=Unhealthy',
      }),
    );
    return list.items as EventLike[];
  }

  /** The Pods of a cluster with the list's resourceVersion, to start a watch from. */
  async listClusterPods(cluster: string): Promise<{ items: PodLike[]; resourceVersion?: string }> {
    const list = await this.call({ verb: 'list', resource: 'pods', namespace: this.namespace }, () =>
      this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `ray.io/cluster=${cluster}` }),
    );
    return { items: list.items as PodLike[], resourceVersion: list.metadata?.resourceVersion };
  }

  /** Watch a cluster's Pods (label ray.io/cluster); same contract as watchRayCluster. */
  async watchClusterPods(
    cluster: string,
    resourceVersion: string | undefined,
    onEvent: (e: { type: WatchEvent['type']; object: PodLike }) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    this.requests++;
    return this.watcher.watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      {
        labelSelector: `ray.io/cluster=${cluster}`,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
      },
      (type, object) => onEvent({ type: type as WatchEvent['type'], object: object as PodLike }),
      onDone,
    );
  }

  private secretAction(verb: string, name?: string): KubeAction {
    return { verb, resource: 'secrets', namespace: this.namespace, name };
  }

  /** Create; on 409 AlreadyExists the existing Secret (a retried create keeps the first token). */
  async createSecret(body: SecretObject): Promise<{ created: boolean; secret: SecretObject }> {
    const { name } = body.metadata;
    try {
      const secret = await this.call(
        this.secretAction('create', name),
        () => this.core.createNamespacedSecret({ namespace: this.namespace, body }),
        [409],
      );
      return { created: true, secret: secret as SecretObject };
    } catch (err) {
      if (!(err instanceof KubeStatusError) || err.status !== 409) throw err;
      const existing = await this.getSecret(name);
      if (!existing)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `Secret ${name} answered 409 AlreadyExists but is gone on read-back; retrying`,
        );
      return { created: false, secret: existing };
    }
  }

  /**
   * The product's Secrets by label (the reaper's search for tokens whose RayCluster never came):
   * their marks only; the tokens are dropped here, never kept.
   */
  async listSecretMarks(labelSelector: string): Promise<SecretMarks[]> {
    const list = await this.call(this.secretAction('list'), () =>
      this.core.listNamespacedSecret({ namespace: this.namespace, labelSelector }),
    );
    return list.items.map(({ metadata: m }) => ({
      name: m?.name ?? '',
      labels: m?.labels,
      annotations: m?.annotations,
      creationTimestamp: m?.creationTimestamp ? new Date(m.creationTimestamp).toISOString() : undefined,
    }));
  }

  /** undefined on 404. */
  async getSecret(name: string): Promise<SecretObject | undefined> {
    return (await this.found(this.secretAction('get', name), () =>
      this.core.readNamespacedSecret({ name, namespace: this.namespace }),
    )) as SecretObject | undefined;
  }

  /** PUT with the read resourceVersion (a concurrent change answers 409 and the caller retries). */
  async replaceSecret(body: SecretObject): Promise<void> {
    const { name } = body.metadata;
    await this.call(this.secretAction('update', name), () =>
      this.core.replaceNamespacedSecret({ name, namespace: this.namespace, body }),
    );
  }

  /** `found: false` on 404. */
  async deleteSecret(name: string): Promise<{ found: boolean }> {
    try {
      await this.call(
        this.secretAction('delete', name),
        () => this.core.deleteNamespacedSecret({ name, namespace: this.namespace }),
        [404],
      );
      return { found: true };
    } catch (err) {
      if (err instanceof KubeStatusError && err.status === 404) return { found: false };
      throw err;
    }
  }

  private configMapAction(verb: string, name?: string): KubeAction {
    return { verb, resource: 'configmaps', namespace: this.namespace, name };
  }

  /** undefined on 404. */
  async getConfigMap(name: string): Promise<ConfigMapObject | undefined> {
    return (await this.found(this.configMapAction('get', name), () =>
      this.core.readNamespacedConfigMap({ name, namespace: this.namespace }),
    )) as ConfigMapObject | undefined;
  }

  /** Create, or PUT with the read resourceVersion: 409 (a concurrent writer) comes back as KubeStatusError. */
  async writeConfigMap(body: ConfigMapObject): Promise<void> {
    const { name } = body.metadata;
    if (body.metadata.resourceVersion)
      await this.call(
        this.configMapAction('update', name),
        () => this.core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body }),
        [409],
      );
    else
      await this.call(
        this.configMapAction('create', name),
        () => this.core.createNamespacedConfigMap({ namespace: this.namespace, body }),
        [409],
      );
  }

  /**
   * The namespace's Kueue Workloads (a queued cluster's place in its LocalQueue); undefined when
   * Kueue is not installed (404) or this identity may not list them (403): the place is optional.
   */
  async listWorkloads(): Promise<WorkloadObject[] | undefined> {
    const action = {
      verb: 'list',
      resource: `${WORKLOAD.plural}.${WORKLOAD.group}`,
      namespace: this.namespace,
    };
    try {
      const list = (await this.call(
        action,
        () => this.custom.listNamespacedCustomObject({ ...WORKLOAD, namespace: this.namespace }),
        [403, 404],
      )) as { items: WorkloadObject[] };
      return list.items;
    } catch (err) {
      if (err instanceof KubeStatusError && (err.status === 403 || err.status === 404)) return undefined;
      throw err;
    }
  }

  /** Whether ray.io/v1 rayclusters is served: the CRD when readable, else API discovery (open to every user). */
  async rayClusterCrd(): Promise<{ installed: boolean; detail: string }> {
    try {
      const crd = await this.call(
        { verb: 'get', resource: 'customresourcedefinitions', name: 'rayclusters.ray.io' },
        () => this.apiext.readCustomResourceDefinition({ name: 'rayclusters.ray.io' }),
        [403, 404],
      );
      const v1 = crd.spec.versions.find((v) => v.name === 'v1');
      return v1?.served
        ? { installed: true, detail: 'CRD rayclusters.ray.io serves v1' }
        : {
            installed: false,
            detail:
              'CRD rayclusters.ray.io exists but does not serve v1: upgrade the KubeRay CRDs (v1.0 or later)',
          };
    } catch (err) {
      if (!(err instanceof KubeStatusError)) throw err;
      if (err.status === 404)
        return {
          installed: false,
          detail:
            'CRD rayclusters.ray.io is not installed: install KubeRay (helm install kuberay-operator kuberay/kuberay-operator, or kubectl create -k ray-operator/config/crd)',
        };
    }
    const groups = await this.call({ verb: 'get', resource: 'API discovery (/apis)' }, () =>
      this.apis.getAPIVersions(),
    );
    const ray = groups.groups.find((g) => g.name === RAYCLUSTER.group);
    return ray?.versions.some((v) => v.version === RAYCLUSTER.version)
      ? {
          installed: true,
          detail: 'API group ray.io/v1 is served (CRD itself not readable by this identity)',
        }
      : { installed: false, detail: 'API group ray.io/v1 is not served: install the KubeRay CRDs' };
  }

  /**
   * SelfSubjectRulesReview: what this identity may do in our namespace, in one request. Rules
   * `complete` only when every authorizer could list its rules (RBAC can; a webhook may not).
   */
  async namespaceRules(): Promise<{ rules: ResourceRule[]; complete: boolean }> {
    const review = await this.call(
      { verb: 'create', resource: 'selfsubjectrulesreviews.authorization.k8s.io' },
      () =>
        this.authz.createSelfSubjectRulesReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectRulesReview',
            spec: { namespace: this.namespace },
          },
        }),
    );
    return { rules: review.status?.resourceRules ?? [], complete: review.status?.incomplete === false };
  }

  /** SelfSubjectAccessReview: may this identity `verb` the resource in our namespace? */
  async canI(verb: string, resource: string, group: string): Promise<{ allowed: boolean; reason: string }> {
    const review = await this.call(
      { verb: 'create', resource: 'selfsubjectaccessreviews.authorization.k8s.io' },
      () =>
        this.authz.createSelfSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { namespace: this.namespace, verb, group, resource } },
          },
        }),
    );
    return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
  }

  /** Allocatable nvidia.com/gpu summed over schedulable nodes. */
  async allocatableGpus(): Promise<{ gpus: number; nodes: number }> {
    const list = await this.call({ verb: 'list', resource: 'nodes' }, () => this.core.listNode());
    let gpus = 0;
    let nodes = 0;
    for (const node of list.items) {
      if (node.spec?.unschedulable) continue;
      nodes++;
      gpus += Number(node.status?.allocatable?.['nvidia.com/gpu'] ?? 0);
    }
    return { gpus, nodes };
  }

  /** The Nodes a label selector finds: name to annotations. */
  async nodeAnnotations(labelSelector: string): Promise<Map<string, Record<string, string>>> {
    const list = await this.call({ verb: 'list', resource: 'nodes' }, () =>
      this.core.listNode({ labelSelector }),
    );
    return new Map(
      list.items
        .filter((n) => n.metadata?.name)
        .map((n) => [n.metadata!.name!, n.metadata?.annotations ?? {}]),
    );
  }

  /** Merge-patch a Node's labels and annotations (null removes a key); false when no such Node. */
  async patchNodeMetadata(
    name: string,
    metadata: { labels: Record<string, string | null>; annotations: Record<string, string | null> },
  ): Promise<boolean> {
    const patched = await this.found({ verb: 'patch', resource: 'nodes', name }, () =>
      this.core.patchNode(
        { name, body: { metadata } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    return patched !== undefined;
  }

  /** The PVC's phase and access modes (the bound ones when bound), or undefined when it does not exist. */
  async pvc(name: string): Promise<{ phase: string; accessModes: string[] } | undefined> {
    const pvc = await this.found(
      { verb: 'get', resource: 'persistentvolumeclaims', namespace: this.namespace, name },
      () => this.core.readNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }),
    );
    if (!pvc) return undefined;
    return {
      phase: pvc.status?.phase ?? 'Unknown',
      accessModes: pvc.status?.accessModes ?? pvc.spec?.accessModes ?? [],
    };
  }
}
