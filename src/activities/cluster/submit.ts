import type { ClusterHandle, ClusterOwner } from '../../domain/cluster/cluster.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { backendOf } from '../common/backend-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { heartbeatWhile } from '../common/heartbeat-loop.js';

/** Stage 3. Create the cluster named from the workflow id and attempt; a retry finds the same one. */
export function createSubmitCluster(deps: ActivityDeps) {
  return async function submitCluster(input: {
    spec: ExperimentSpec;
    name: string;
    owner: ClusterOwner;
  }): Promise<ClusterHandle> {
    return heartbeatWhile(
      backendOf(deps, input.spec.backend).createCluster({
        name: input.name,
        spec: input.spec,
        owner: input.owner,
      }),
    );
  };
}
