import { Gauge, type Registry } from 'prom-client';
import type { ActivityDeps } from '../activities/common/deps.js';

/**
 * `ragen_clusters_alive{backend}`: the product's clusters that exist now, listed from each backend
 * at scrape time (the reaper's listing), so every worker reports the same truth instead of a count
 * it kept itself. A backend that cannot be listed has no series in that scrape, never a wrong 0.
 */
export function registerClustersAlive(registry: Registry, backends: ActivityDeps['backends']): Gauge {
  return new Gauge({
    name: 'ragen_clusters_alive',
    help: 'Clusters of this product that exist now (RayClusters with its labels; local Ray clusters under the run root), by backend',
    labelNames: ['backend'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const backend of Object.values(backends)) {
        if (!backend) continue;
        try {
          this.set({ backend: backend.kind }, (await backend.listClusters()).length);
        } catch {
          // Unlisted this time: no series rather than a wrong 0 (an alert on absence sees it).
        }
      }
    },
  });
}
