import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { backendOf } from '../common/backend-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { heartbeatAndWait, workflowIdOfActivity } from '../common/heartbeat-loop.js';

/**
 * Before join, for a cluster in a Kueue queue (kuberay.queueName): wait while the RayCluster is
 * suspended (not yet admitted). Waiting is not a failure; the workflow bounds it with its own timer
 * (kuberay.admissionSeconds), so the join deadline counts only from admission. Heartbeat:
 * {queuedSeconds, queuePosition?}. Each change of the cluster's place in its LocalQueue goes to the
 * workflow (a progress signal: its status shows it), and 0 once admitted. Idempotent: it only reads.
 */
export function createAwaitAdmission(deps: ActivityDeps) {
  return async function awaitAdmission(input: {
    spec: ExperimentSpec;
    handle: ClusterHandle;
  }): Promise<{ queuedSeconds: number }> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const workflowId = workflowIdOfActivity();
    const started = Date.now();
    let told: number | undefined;
    const tell = async (queuePosition: number) => {
      if (queuePosition === told) return;
      told = queuePosition;
      await deps.reportProgress(workflowId, { queuePosition }).catch(() => undefined);
    };
    for (;;) {
      const status = await backend.describeCluster(handle);
      if (status.phase === 'failed' || status.phase === 'gone') {
        throw permanent(
          status.failureType ?? ErrorTypes.ClusterLost,
          `cluster ${handle.name} is ${status.phase} while waiting for admission: ${status.message ?? ''}`,
        );
      }
      const queuedSeconds = Math.round((Date.now() - started) / 1000);
      if (status.phase !== 'queued') {
        if (told !== undefined) await tell(0);
        return { queuedSeconds };
      }
      if (status.queuePosition !== undefined) await tell(status.queuePosition);
      await heartbeatAndWait(
        { queuedSeconds, queuePosition: status.queuePosition, message: status.message },
        deps.pollIntervalMs,
      );
    }
  };
}
