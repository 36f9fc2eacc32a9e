import type { ClusterStatus } from '../../domain/cluster/cluster.js';
import { POLLING_CALLER } from '../../errors/retry-transient.js';
import { RayDashboardClient } from './dashboard-client.js';

/**
 * The status of a cluster whose head process exists, read from the head itself: Ray's node list
 * is the authority on "joined" (a running process or a ready pod is not yet a registered node).
 * A head that does not answer yet is `pending`, with why; `context` prefixes the backend's own view;
 * `token`: the cluster's Ray auth token.
 */
export async function statusFromHead(
  dashboardUrl: string,
  context?: string,
  token?: string,
): Promise<ClusterStatus> {
  const dashboard = new RayDashboardClient(dashboardUrl, token, POLLING_CALLER);
  try {
    const [nodes, headRayVersion] = await Promise.all([dashboard.nodes(), dashboard.rayVersion()]);
    const alive = nodes.filter((n) => n.alive);
    return {
      phase: 'ready',
      nodes,
      workersAlive: alive.filter((n) => !n.isHead).length,
      gpusRegistered: alive.reduce((s, n) => s + n.gpus, 0),
      headRayVersion,
      message: context,
    };
  } catch (err) {
    const why = `dashboard ${dashboardUrl} not answering yet: ${(err as Error).message}`;
    return {
      phase: 'pending',
      nodes: [],
      workersAlive: 0,
      gpusRegistered: 0,
      message: context ? `${context}; ${why}` : why,
    };
  }
}
