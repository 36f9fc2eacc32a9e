import { ApplicationFailure } from '@temporalio/workflow';
import type { ClusterHandle } from '../domain/cluster/cluster.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import { withDeadline } from './deadline.js';
import { awaitAdmission } from './policies.js';

/**
 * A RayCluster in a Kueue queue waits suspended until admitted: not a failure, and not counted
 * against the join deadline. Its own timer is kuberay.admissionSeconds.
 */
export async function waitForAdmission(spec: ExperimentSpec, cluster: ClusterHandle): Promise<void> {
  const seconds = spec.kuberay?.admissionSeconds ?? 24 * 3600;
  const r = await withDeadline(seconds * 1000, () => awaitAdmission({ spec, handle: cluster }));
  if (r.timedOut) {
    throw ApplicationFailure.create({
      type: ErrorTypes.AdmissionDeadlineExceeded,
      nonRetryable: true,
      message: `RayCluster ${cluster.name} was not admitted from Kueue queue ${spec.kuberay?.queueName} within ${seconds} s (kuberay.admissionSeconds); check the queue's ClusterQueue quota (kubectl get clusterqueues) or raise admissionSeconds`,
    });
  }
}
