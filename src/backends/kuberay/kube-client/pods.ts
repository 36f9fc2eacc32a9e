import type { PodLike } from '../pod-failures.js';
import type { EventLike } from '../probe-failures.js';
import type { KubeTransport, WatchEvent } from './transport.js';

/**
 * Pods of the namespace and what is said about them: KubeRay's Pods of a cluster (label
 * ray.io/cluster), the kubelet's probe-failure Events, and the PersistentVolumeClaim they mount.
 */
export class PodsClient {
  constructor(private readonly transport: KubeTransport) {}

  private get namespace(): string {
    return this.transport.namespace;
  }

  /** The Pods of a cluster with the list's resourceVersion, to start a watch from. */
  async listOfCluster(cluster: string): Promise<{ items: PodLike[]; resourceVersion?: string }> {
    const list = await this.transport.call(
      { verb: 'list', resource: 'pods', namespace: this.namespace },
      ({ core }) =>
        core.listNamespacedPod({ namespace: this.namespace, labelSelector: `ray.io/cluster=${cluster}` }),
    );
    return { items: list.items as PodLike[], resourceVersion: list.metadata?.resourceVersion };
  }

  /** How many Pods KubeRay made for a cluster: they outlive the object until GC removes them. */
  async countOfCluster(cluster: string): Promise<number> {
    return (await this.listOfCluster(cluster)).items.length;
  }

  /** Watch a cluster's Pods from a resourceVersion; see KubeTransport.watch. */
  async watchOfCluster(
    cluster: string,
    resourceVersion: string | undefined,
    onEvent: (e: WatchEvent<PodLike>) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    return this.transport.watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      {
        labelSelector: `ray.io/cluster=${cluster}`,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
      },
      (e) => onEvent(e as WatchEvent<PodLike>),
      onDone,
    );
  }

  /** The kubelet's probe-failure Events on Pods in the namespace (reason Unhealthy): one list call. */
  async probeEvents(): Promise<EventLike[]> {
    const list = await this.transport.call(
      { verb: 'list', resource: 'events', namespace: this.namespace },
      ({ core }) =>
        core.listNamespacedEvent({
          namespace: this.namespace,
          fieldSelector: 'involvedObject.kind=Pod,reason=Unhealthy',
        }),
    );
    return list.items as EventLike[];
  }

  /** The claim's phase and access modes (the bound ones when bound), or undefined when it does not exist. */
  async claim(name: string): Promise<{ phase: string; accessModes: string[] } | undefined> {
    const pvc = await this.transport.found(
      { verb: 'get', resource: 'persistentvolumeclaims', namespace: this.namespace, name },
      ({ core }) => core.readNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }),
    );
    if (!pvc) return undefined;
    return {
      phase: pvc.status?.phase ?? 'Unknown',
      accessModes: pvc.status?.accessModes ?? pvc.spec?.accessModes ?? [],
    };
  }
}
