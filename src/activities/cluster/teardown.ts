import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { backendOf } from '../common/backend-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { heartbeatWhile } from '../common/heartbeat-loop.js';

/** Stage 8. Delete the cluster and wait until nothing of it is left; gone already is success. */
export function createTeardown(deps: ActivityDeps) {
  return async function teardown(input: { handle: ClusterHandle }): Promise<{ alreadyGone: boolean }> {
    return heartbeatWhile(backendOf(deps, input.handle.backend).deleteCluster(input.handle));
  };
}
