import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterHandle, ClusterStatus } from '../../domain/cluster/cluster.js';
import type { RetryOptions } from '../../errors/retry-transient.js';
import { isDomainError, permanent, transient } from '../../errors/domain-error.js';
import { liveSuspects, type NodeLedgerStore } from '../../domain/node-health/node-ledger.js';
import { NodeLedgerConfigMap } from './node-ledger-configmap.js';
import { syncSuspectLabels } from './node-labels.js';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import type { ComputeBackend, CreateClusterRequest, OwnedCluster, PreflightCheck } from '../backend.js';
import { statusFromHead } from '../ray/head-status.js';
import { dashboardFromStatus, interpretRayCluster } from './cluster-status.js';
import { KubeClients } from './kube-client/clients.js';
import { loadKubeConfig } from './kube-config.js';
import { MANAGED_SELECTOR, isOwnedBy, readOwner } from './labels.js';
import { kuberayPreflight } from './preflight.js';
import {
  AVOIDED_NODES_ANNOTATION,
  KUEUE_QUEUE_LABEL,
  type RayClusterObject,
  buildRayCluster,
} from './raycluster.js';
import { queuePosition } from './kueue-workloads.js';
import { RayClusterCache } from './raycluster-cache.js';
import type { BackendLogger } from '../logger.js';
import { RayPodCache } from './pod-cache.js';
import { type PodFailure, type PodLike, podFailures, podsWaiting } from './pod-failures.js';
import { probeFailures } from './probe-failures.js';
import {
  type SecretObject,
  authSecretName,
  headUsesTokenAuth,
  buildAuthSecret,
  clusterOfAuthSecret,
  tokenOf,
} from './auth-secret.js';

/**
 * How the worker reaches a head's dashboard. `service`: the head Service's cluster DNS
 * (`http://<cluster>-head-svc.<ns>.svc:8265`), for workers running in the cluster. `head-status`:
 * `http://<status.head.podIP>:<status.endpoints.dashboard>` as the operator writes them, for a
 * worker on the pod network (the test environment: its host is on the Pods' bridge).
 */
export type DashboardMode = 'service' | 'head-status';

export interface KubeRayBackendConfig {
  namespace: string;
  /** undefined: KUBECONFIG, ~/.kube/config, then the in-cluster service account. */
  kubeconfig?: string;
  dashboard: DashboardMode;
  /** The interpreter on the image's PATH that runs the payload. */
  python: string;
  /** How long createCluster waits for the head address in head-status mode. */
  headAddressTimeoutMs?: number;
  /** How long deleteCluster waits for the object and its pods to disappear. */
  deleteTimeoutMs?: number;
  pollMs?: number;
  /** Escalations (a 409 read back, a delete still waiting) are logged here. */
  logger?: BackendLogger;
  /** In-place retries of transient Kubernetes API failures (the worker's heartbeat while waiting); default none. */
  retry?: Partial<RetryOptions>;
  /** Label the node ledger's live suspects' Nodes for the platform (node-labels.ts; needs a ClusterRole). */
  labelSuspectNodes?: boolean;
}

/** How often, at most, a joining cluster's probe events are listed (KubeRay probes every 5 s). */
const PROBE_EVENTS_EVERY_MS = 10_000;

/**
 * The kuberay backend: one RayCluster custom resource per experiment attempt through the
 * Kubernetes API; status from its conditions and counters plus the head's dashboard; jobs through
 * the same Ray Jobs REST client as the local backend.
 */
export class KubeRayBackend implements ComputeBackend {
  readonly kind = 'kuberay' as const;
  private kubeInstance: KubeClients | undefined;
  private cacheInstance: RayClusterCache | undefined;
  private podCacheInstance: RayPodCache | undefined;
  /** Ray auth tokens by cluster name, read once from each cluster's Secret (memory only). */
  private readonly tokens = new Map<string, string>();
  /** When each cluster's probe events were last listed (see probeFailuresOf). */
  private readonly probeEventsReadAt = new Map<string, number>();

  constructor(
    readonly config: KubeRayBackendConfig,
    kube?: KubeClients,
  ) {
    this.kubeInstance = kube;
  }

  /** The client, made on first use so a worker without a kubeconfig still serves the local backend. */
  get kube(): KubeClients {
    this.kubeInstance ??= new KubeClients(
      loadKubeConfig(this.config.kubeconfig),
      this.config.namespace,
      this.config.logger,
      this.config.retry,
    );
    return this.kubeInstance;
  }

  private get cache(): RayClusterCache {
    this.cacheInstance ??= new RayClusterCache(this.kube.rayClusters);
    return this.cacheInstance;
  }

  private get pods(): RayPodCache {
    this.podCacheInstance ??= new RayPodCache(this.kube.pods);
    return this.podCacheInstance;
  }

  resolveArgv(argv: readonly string[]): string[] {
    return argv.map((a, i) => (i === 0 && a === 'python' ? this.config.python : a));
  }

  async plannedRayVersion(): Promise<string | undefined> {
    return undefined; // known only from the image (registry verification) or the running head
  }

  preflight(spec: ExperimentSpec): Promise<PreflightCheck[]> {
    return kuberayPreflight(this.kube, spec, this.config.labelSuspectNodes);
  }

  nodeLedger(): NodeLedgerStore {
    return new NodeLedgerConfigMap(this.kube, this.config.labelSuspectNodes);
  }

  async createCluster({ name, spec, owner }: CreateClusterRequest): Promise<ClusterHandle> {
    // Pods that cannot avoid the suspects stay Pending (the scheduler says why): the join deadline bounds the wait.
    const live = liveSuspects(await this.nodeLedger().read(), new Date());
    // Expired entries lose their Node label here: the ledger is written only on findings and clears.
    if (this.config.labelSuspectNodes) await syncSuspectLabels(this.kube.nodes, live);
    const avoidNodes = live.map((s) => s.node);
    let body: RayClusterObject;
    try {
      body = buildRayCluster({ name, namespace: this.config.namespace, spec, owner, avoidNodes });
    } catch (err) {
      throw permanent(ErrorTypes.InvalidSpec, (err as Error).message);
    }
    // The token's Secret first: the Pods read it at start (a missing Secret would fail them).
    // None with auth: none (the Pods then read no token, dashboardToken finds none).
    const auth =
      spec.auth === 'none'
        ? undefined
        : await this.kube.secrets.create(buildAuthSecret(name, this.config.namespace, owner));
    if (auth && !auth.created && !isOwnedBy(auth.secret.metadata, owner))
      throw permanent(
        ErrorTypes.ClusterNameTaken,
        `Secret ${this.ref(authSecretName(name))} already exists and is not this workflow attempt's; delete it or rename the experiment`,
      );
    const { created, object } = await this.kube.rayClusters.create(body);
    if (!created && !isOwnedBy(object.metadata, owner)) {
      if (auth?.created) await this.kube.secrets.delete(authSecretName(name));
      throw permanent(
        ErrorTypes.ClusterNameTaken,
        `RayCluster ${this.ref(name)} already exists and is not this workflow attempt's (labels ${JSON.stringify(object.metadata.labels ?? {})}); delete it or rename the experiment`,
      );
    }
    if (auth) {
      await this.adoptSecret(auth.secret, object);
      const token = tokenOf(auth.secret);
      if (token) this.tokens.set(name, token);
    }
    // Suspended (Kueue's webhook suspends a cluster with a queue label until admitted): no head
    // yet, so no address to wait for; the activities find it in the status once it is admitted.
    const queued = object.spec['suspend'] === true && this.config.dashboard === 'head-status';
    return {
      backend: 'kuberay',
      name,
      namespace: this.config.namespace,
      owner,
      ...(queued ? {} : { dashboardUrl: await this.dashboardUrl(name) }),
    };
  }

  /** The handle's dashboard address, else (a cluster created suspended) the one in its status now. */
  async dashboardUrlOf(handle: ClusterHandle): Promise<string | undefined> {
    if (handle.dashboardUrl) return handle.dashboardUrl;
    if (this.config.dashboard === 'service')
      return `http://${handle.name}-head-svc.${this.config.namespace}.svc:8265`;
    return dashboardFromStatus(await this.cache.get(handle.name));
  }

  /** The RayCluster owns its Secret, so Kubernetes' garbage collector removes it with the cluster. */
  private async adoptSecret(secret: SecretObject, cluster: RayClusterObject): Promise<void> {
    const uid = cluster.metadata.uid;
    if (!uid || secret.metadata.ownerReferences?.some((r) => r.uid === uid)) return;
    await this.kube.secrets.replace({
      ...secret,
      metadata: {
        ...secret.metadata,
        ownerReferences: [
          { apiVersion: cluster.apiVersion, kind: cluster.kind, name: cluster.metadata.name, uid },
        ],
      },
    });
  }

  /** From the cluster's Secret, read once per worker process; undefined when it has none. */
  async dashboardToken(handle: ClusterHandle): Promise<string | undefined> {
    const cached = this.tokens.get(handle.name);
    if (cached) return cached;
    // An auth: none cluster has no Secret: its watched object says so without a request (a GET
    // per dashboard call was most of the worker's API requests).
    const object = await this.cache.get(handle.name);
    if (object && !headUsesTokenAuth(object)) return undefined;
    const secret = await this.kube.secrets.get(authSecretName(handle.name));
    const token = secret && tokenOf(secret);
    if (token) this.tokens.set(handle.name, token);
    return token;
  }

  private async dashboardUrl(name: string): Promise<string> {
    if (this.config.dashboard === 'service')
      return `http://${name}-head-svc.${this.config.namespace}.svc:8265`;
    const deadline = Date.now() + (this.config.headAddressTimeoutMs ?? 240_000);
    for (;;) {
      const object = await this.cache.get(name);
      const url = dashboardFromStatus(object);
      if (url) return url;
      if (!object)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `RayCluster ${this.ref(name)} disappeared before its head got an address`,
        );
      if (Date.now() > deadline)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `RayCluster ${this.ref(name)}: no head address in status after ${(this.config.headAddressTimeoutMs ?? 240_000) / 1000} s (${interpretRayCluster(object, this.ref(name)).message})`,
        );
      await sleep(this.config.pollMs ?? 1000);
    }
  }

  /** The cluster's place in its Kueue LocalQueue; undefined when unknown (the status says queued anyway). */
  private async queuePositionOf(cluster: string): Promise<number | undefined> {
    try {
      const workloads = await this.kube.workloads.list();
      return workloads && queuePosition(workloads, cluster);
    } catch {
      return undefined; // informational: a failed list never fails a status read
    }
  }

  /**
   * The RayCluster's conditions and counters, then its Pods (an image the kubelet cannot pull, a
   * missing Secret, a crash loop: failed with that error type), then Ray's own view from the head.
   * Both objects come from watches: no GET per poll.
   */
  async describeCluster(handle: ClusterHandle): Promise<ClusterStatus> {
    const object = await this.cache.get(handle.name);
    const verdict = interpretRayCluster(object, this.ref(handle.name));
    const empty = { nodes: [], workersAlive: 0, gpusRegistered: 0 };
    if (verdict.phase === 'failed')
      return { phase: 'failed', failureType: verdict.failureType, ...empty, message: verdict.message };
    if (verdict.phase === 'gone' || verdict.phase === 'queued') {
      // A cluster in a Kueue LocalQueue: its place there, when the Workloads are readable.
      const inQueue = verdict.phase === 'queued' && object?.metadata.labels?.[KUEUE_QUEUE_LABEL];
      const position = inQueue ? await this.queuePositionOf(handle.name) : undefined;
      return {
        phase: verdict.phase,
        ...empty,
        message: position ? `${verdict.message} (place ${position} in the queue)` : verdict.message,
        ...(position ? { queuePosition: position } : {}),
      };
    }
    const pods = (await this.pods.get(handle.name)) ?? [];
    const [first, ...more] = [...podFailures(pods), ...(await this.probeFailuresOf(handle.name, pods))];
    if (first) {
      const message = [first, ...more].map((f) => f.message).join('; ');
      return {
        phase: 'failed',
        failureType: first.type,
        ...empty,
        message: `RayCluster ${this.ref(handle.name)}: ${message}`,
      };
    }
    // Pods the scheduler cannot place (also workers once the head is up), and the suspects this
    // cluster avoids: a wait for healthy capacity says why it waits.
    const waiting = podsWaiting(pods);
    const avoided = object?.metadata.annotations?.[AVOIDED_NODES_ANNOTATION];
    if (waiting.length && avoided)
      waiting.push(`the cluster avoids link-suspect nodes ${avoided} (\`ragen-orchestrator nodes\`)`);
    const message = waiting.length ? `${verdict.message}; ${waiting.join('; ')}` : verdict.message;
    if (verdict.phase !== 'head-ready') return { phase: 'pending', ...empty, message };
    const url = handle.dashboardUrl ?? dashboardFromStatus(object);
    if (!url) return { phase: 'pending', ...empty, message: `${message}; no dashboard address yet` };
    return statusFromHead(url, message, await this.dashboardToken(handle));
  }

  /**
   * KubeRay's probes run wget and bash in the Ray container: an image without them keeps running,
   * never Ready, and only the kubelet's Unhealthy events say why. Read them (one list call) only
   * while a container runs unready, at most once per PROBE_EVENTS_EVERY_MS per cluster, so a
   * healthy join spends almost nothing of the request budget.
   */
  private async probeFailuresOf(cluster: string, pods: readonly PodLike[]): Promise<PodFailure[]> {
    const unready = pods.filter(
      (p) =>
        !p.metadata?.deletionTimestamp &&
        (p.status?.containerStatuses ?? []).some((s) => s.state?.running && s.ready === false),
    );
    const last = this.probeEventsReadAt.get(cluster) ?? 0;
    if (!unready.length || Date.now() - last < PROBE_EVENTS_EVERY_MS) return [];
    this.probeEventsReadAt.set(cluster, Date.now());
    const uids = new Set(unready.map((p) => p.metadata?.uid).filter(Boolean));
    const events = await this.kube.pods.probeEvents();
    return probeFailures(events.filter((e) => e.involvedObject?.uid && uids.has(e.involvedObject.uid)));
  }

  /** Delete (404 = already gone), then poll until the object and its Ray pods are gone. */
  async deleteCluster(handle: ClusterHandle): Promise<{ alreadyGone: boolean }> {
    const { found } = await this.kube.rayClusters.delete(handle.name);
    const deadline = Date.now() + (this.config.deleteTimeoutMs ?? 300_000);
    for (;;) {
      const object = await this.kube.rayClusters.get(handle.name);
      const pods = object ? -1 : await this.rayPodsLeft(handle.name);
      if (!object && pods <= 0) break;
      if (Date.now() > deadline) {
        this.config.logger?.warn('RayCluster delete not finished in time; the activity retries', {
          cluster: handle.name,
          pods,
        });
        throw transient(
          TransientErrorTypes.TeardownIncomplete,
          `RayCluster ${this.ref(handle.name)} still ${object ? 'exists' : `has ${pods} pods`} after delete; retrying`,
        );
      }
      await sleep(this.config.pollMs ?? 1000);
    }
    // Garbage collection removes the Secret where kube-controller-manager runs; delete it anyway.
    const secret = await this.kube.secrets.delete(authSecretName(handle.name));
    this.tokens.delete(handle.name);
    this.cacheInstance?.forget(handle.name);
    this.podCacheInstance?.forget(handle.name);
    return { alreadyGone: !found && !secret.found };
  }

  /** Pods left behind; -1 (unknown, not waited for) when this identity may not list pods. */
  private async rayPodsLeft(name: string): Promise<number> {
    try {
      return await this.kube.pods.countOfCluster(name);
    } catch (err) {
      if (isDomainError(err) && err.type === ErrorTypes.KubePermissionDenied) return -1;
      throw err;
    }
  }

  /**
   * The product's RayClusters, and token Secrets whose RayCluster does not exist: submit makes the
   * Secret first, so a worker that died (or a workflow terminated) between the two leaves one. The
   * reaper treats it as a cluster of that name: deleteCluster finds no RayCluster and deletes it.
   */
  async listClusters(): Promise<OwnedCluster[]> {
    const items = await this.kube.rayClusters.list(MANAGED_SELECTOR);
    const names = new Set(items.map((i) => i.metadata.name));
    const lone = (await this.kube.secrets.listMarks(MANAGED_SELECTOR)).flatMap((marks) => {
      const cluster = clusterOfAuthSecret(marks.name);
      return cluster !== undefined && !names.has(cluster) ? [{ name: cluster, metadata: marks }] : [];
    });
    const marked = [...items.map((i) => ({ name: i.metadata.name, metadata: i.metadata })), ...lone];
    return marked.map(({ name, metadata }) => {
      const read = readOwner(metadata);
      const owner = 'owner' in read ? read.owner : undefined;
      return {
        handle: {
          backend: 'kuberay',
          name,
          namespace: this.config.namespace,
          owner: owner ?? { experiment: '?', workflowId: '?', runId: '?', attempt: 0 },
        },
        owner,
        createdAt: metadata.creationTimestamp,
        problem: 'problem' in read ? read.problem : undefined,
      };
    });
  }

  /** Stop the watches (worker shutdown, tests). */
  close(): void {
    this.cacheInstance?.close();
    this.podCacheInstance?.close();
  }

  private ref(name: string): string {
    return `${this.config.namespace}/${name}`;
  }
}
