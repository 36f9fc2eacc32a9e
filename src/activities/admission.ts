import type { ClusterHandle } from '../domain/cluster.js';
import { ErrorTypes } from '../domain/error-types.js';
import type { ExperimentSpec } from '../domain/experiment.js';
import { backendOf } from './backend-of.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';
import { heartbeatAndWait } from './heartbeat-loop.js';

/**
 * Before join, for a cluster in a Kueue queue (kuberay.queueName): wait while the RayCluster is
 * suspended (not yet admitted). Waiting is not a failure; the workflow bounds it with its own timer
 * (kuberay.admissionSeconds), so the join deadline counts only from admission. Heartbeat:
 * {queuedSeconds}. Idempotent: it only reads.
 */
export function createAwaitAdmission(deps: ActivityDeps) {
  return async function awaitAdmission(input: {
    spec: ExperimentSpec;
    handle: ClusterHandle;
  }): Promise<{ queuedSeconds: number }> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const started = Date.now();
    for (;;) {
      const status = await backend.describeCluster(handle);
      if (status.phase === 'failed' || status.phase === 'gone') {
        throw permanent(
          status.failureType ?? ErrorTypes.ClusterLost,
          `cluster ${handle.name} is ${status.phase} while waiting for admission: ${status.message ?? ''}`,
        );
      }
      const queuedSeconds = Math.round((Date.now() - started) / 1000);
      if (status.phase !== 'queued') return { queuedSeconds };
      await heartbeatAndWait({ queuedSeconds, message: status.message }, deps.pollIntervalMs);
    }
  };
}
