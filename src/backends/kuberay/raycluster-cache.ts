import type { RayClustersClient } from './kube-client/rayclusters.js';
import type { RayClusterObject } from './raycluster.js';

interface Entry {
  object: RayClusterObject | undefined;
  /** True while a watch stream keeps `object` current; false means the next read re-lists. */
  live: boolean;
  abort?: AbortController;
  lastUsed: number;
}

/** Watches nobody read for this long are closed. */
const IDLE_MS = 120_000;

/**
 * The RayClusters this worker is waiting on or training with, kept current by one watch each
 * instead of a GET per poll: the join and train loops read every few seconds, and the API budget
 * is a dozen requests a minute. A read while the watch is down (API server restarting) does a GET,
 * whose failure is the activity's to retry.
 *
 * Not the client's makeInformer (1.4): it opens its watches with a Watch of its own, which
 * KubeTransport.requests would not count; it takes no field selector, so it would watch every RayCluster
 * of the namespace; and it re-watches and re-lists in the background, outside the reading activity,
 * where a re-watch whose credentials fail (an exec plugin) rejects a promise nobody awaits. Here a
 * request happens only inside a read, counted, and its failure is that activity's.
 */
export class RayClusterCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly rayClusters: RayClustersClient) {}

  async get(name: string): Promise<RayClusterObject | undefined> {
    this.closeIdle();
    const entry = this.entries.get(name);
    if (entry?.live) {
      entry.lastUsed = Date.now();
      return entry.object;
    }
    entry?.abort?.abort();
    const object = await this.rayClusters.get(name);
    const fresh: Entry = { object, live: false, lastUsed: Date.now() };
    this.entries.set(name, fresh);
    // Nothing to watch for a cluster that is gone: the caller reports it.
    if (object) await this.startWatch(name, fresh, object.metadata.resourceVersion);
    return object;
  }

  private async startWatch(name: string, entry: Entry, resourceVersion: string | undefined): Promise<void> {
    let ended = false;
    const abort = await this.rayClusters.watch(
      name,
      resourceVersion,
      (event) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED') entry.object = event.object;
        else if (event.type === 'DELETED') entry.object = undefined;
        else if (event.type === 'ERROR') entry.live = false; // e.g. 410 Gone: re-list on the next read
      },
      () => {
        ended = true;
        entry.live = false;
      },
    );
    entry.abort = abort;
    if (!ended && this.entries.get(name) === entry) entry.live = true;
  }

  /** Stop watching one cluster (after its deletion). */
  forget(name: string): void {
    this.entries.get(name)?.abort?.abort();
    this.entries.delete(name);
  }

  close(): void {
    for (const name of [...this.entries.keys()]) this.forget(name);
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [name, e] of this.entries) if (now - e.lastUsed > IDLE_MS) this.forget(name);
  }
}
