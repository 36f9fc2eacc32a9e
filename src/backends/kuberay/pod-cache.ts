import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { PodsClient } from './kube-client/pods.js';
import type { PodLike } from './pod-failures.js';

interface Entry {
  pods: Map<string, PodLike>;
  /** True while a watch keeps `pods` current; false means the next read re-lists. */
  live: boolean;
  abort?: AbortController;
  lastUsed: number;
}

/** Watches nobody read for this long are closed. */
const IDLE_MS = 120_000;

/**
 * The Pods of the clusters this worker is waiting on or training with (label ray.io/cluster), kept
 * current by one list and one watch each, like RayClusterCache: the join and train loops read every
 * few seconds and the API budget is a dozen requests a minute. An identity that may not list pods
 * gets `undefined` (pod failures then surface only through the deadlines), asked once per cluster.
 * Why not the client's makeInformer: see RayClusterCache.
 */
export class RayPodCache {
  private readonly entries = new Map<string, Entry>();
  private readonly denied = new Set<string>();

  constructor(private readonly pods: PodsClient) {}

  async get(cluster: string): Promise<PodLike[] | undefined> {
    this.closeIdle();
    if (this.denied.has(cluster)) return undefined;
    const entry = this.entries.get(cluster);
    if (entry?.live) {
      entry.lastUsed = Date.now();
      return [...entry.pods.values()];
    }
    entry?.abort?.abort();
    let list: Awaited<ReturnType<PodsClient['listOfCluster']>>;
    try {
      list = await this.pods.listOfCluster(cluster);
    } catch (err) {
      if ((err as { type?: string }).type !== ErrorTypes.KubePermissionDenied) throw err;
      this.denied.add(cluster);
      return undefined;
    }
    const fresh: Entry = {
      pods: new Map(list.items.map((p) => [p.metadata?.name ?? '', p])),
      live: false,
      lastUsed: Date.now(),
    };
    this.entries.set(cluster, fresh);
    await this.startWatch(cluster, fresh, list.resourceVersion);
    return list.items;
  }

  private async startWatch(
    cluster: string,
    entry: Entry,
    resourceVersion: string | undefined,
  ): Promise<void> {
    let ended = false;
    const abort = await this.pods.watchOfCluster(
      cluster,
      resourceVersion,
      (event) => {
        const name = event.object.metadata?.name ?? '';
        if (event.type === 'ADDED' || event.type === 'MODIFIED') entry.pods.set(name, event.object);
        else if (event.type === 'DELETED') entry.pods.delete(name);
        else if (event.type === 'ERROR') entry.live = false; // e.g. 410 Gone: re-list on the next read
      },
      () => {
        ended = true;
        entry.live = false;
      },
    );
    entry.abort = abort;
    if (!ended && this.entries.get(cluster) === entry) entry.live = true;
  }

  forget(cluster: string): void {
    this.entries.get(cluster)?.abort?.abort();
    this.entries.delete(cluster);
    this.denied.delete(cluster);
  }

  close(): void {
    for (const cluster of [...this.entries.keys()]) this.forget(cluster);
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [cluster, e] of this.entries) if (now - e.lastUsed > IDLE_MS) this.forget(cluster);
  }
}
