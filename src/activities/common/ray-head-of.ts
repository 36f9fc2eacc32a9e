import type { RayHeadApi } from '../../backends/ray/dashboard-client.js';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { backendOf } from './backend-of.js';
import type { ActivityDeps } from './deps.js';

/**
 * The cluster's Ray head API with its auth token, asked of the backend at call time: the token
 * is never part of the handle, so it never enters workflow history.
 */
export async function rayHeadOf(deps: ActivityDeps, handle: ClusterHandle): Promise<RayHeadApi> {
  const backend = backendOf(deps, handle.backend);
  const token = await backend.dashboardToken(handle);
  const url = handle.dashboardUrl ?? (await backend.dashboardUrlOf?.(handle));
  return deps.rayHead(url ?? '', token);
}
