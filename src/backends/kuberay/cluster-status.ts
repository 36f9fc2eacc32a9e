import { ErrorTypes } from '../../domain/failures/error-types.js';
import { KUEUE_QUEUE_LABEL, type RayClusterCondition, type RayClusterObject } from './raycluster.js';

/** What the RayCluster object alone says; Ray's own view (nodes, GPUs) comes from the dashboard. */
export type CrVerdict =
  | { phase: 'gone'; message: string }
  | { phase: 'failed'; message: string; failureType: typeof ErrorTypes.ReplicaFailure }
  | { phase: 'queued'; message: string }
  | { phase: 'pending'; message: string }
  | { phase: 'head-ready'; message: string; readyWorkers: number; desiredWorkers: number };

function condition(obj: RayClusterObject, type: string): RayClusterCondition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}

/**
 * Pure: read health from `readyWorkerReplicas` / `desiredWorkerReplicas` and the conditions
 * (`HeadPodReady`, `RayClusterProvisioned`, `ReplicaFailure`, `RayClusterSuspended`), never from the deprecated `state`,
 * which KubeRay leaves at `ready` after pods die. Absent counters mean 0 (KubeRay omits zeros).
 */
export function interpretRayCluster(obj: RayClusterObject | undefined, ref: string): CrVerdict {
  if (!obj)
    return {
      phase: 'gone',
      message: `RayCluster ${ref} does not exist: it was deleted outside this workflow (it is not re-created)`,
    };
  if (obj.metadata.deletionTimestamp)
    return {
      phase: 'gone',
      message: `RayCluster ${ref} is being deleted (since ${obj.metadata.deletionTimestamp}) outside this workflow's teardown; it is not re-created`,
    };
  const failure = condition(obj, 'ReplicaFailure');
  if (failure?.status === 'True') {
    return {
      phase: 'failed',
      failureType: ErrorTypes.ReplicaFailure,
      message: `RayCluster ${ref} reports ReplicaFailure: ${failure.reason ?? 'unknown reason'}${failure.message ? `: ${failure.message}` : ''}`,
    };
  }
  const suspended = ['RayClusterSuspended', 'RayClusterSuspending'].find(
    (type) => condition(obj, type)?.status === 'True',
  );
  if (obj.spec['suspend'] === true || suspended) {
    // Kueue suspends a RayCluster until its queue admits it: waiting, not failing.
    const queue = obj.metadata.labels?.[KUEUE_QUEUE_LABEL];
    return {
      phase: 'queued',
      message: `RayCluster ${ref} is suspended (${suspended ?? 'spec.suspend=true'})${queue ? `, waiting for Kueue to admit it from queue ${queue}` : ', waiting to be resumed'}`,
    };
  }
  const desired = obj.status?.desiredWorkerReplicas ?? 0;
  const ready = obj.status?.readyWorkerReplicas ?? 0;
  const stale =
    obj.status?.observedGeneration !== undefined &&
    obj.metadata.generation !== undefined &&
    obj.status.observedGeneration < obj.metadata.generation;
  const head = condition(obj, 'HeadPodReady');
  if (stale)
    return {
      phase: 'pending',
      message: `RayCluster ${ref}: the operator has not observed generation ${obj.metadata.generation} yet`,
    };
  if (head?.status !== 'True') {
    return {
      phase: 'pending',
      message: `RayCluster ${ref}: head pod not ready (${head ? `${head.reason ?? head.status}${head.message ? `: ${head.message}` : ''}` : 'no HeadPodReady condition yet: is the KubeRay operator running?'})`,
    };
  }
  const provisioned = condition(obj, 'RayClusterProvisioned');
  return {
    phase: 'head-ready',
    readyWorkers: ready,
    desiredWorkers: desired,
    message: `RayCluster ${ref}: ${ready}/${desired} worker pods ready${provisioned ? `, RayClusterProvisioned=${provisioned.status} (${provisioned.reason ?? ''})` : ''}`,
  };
}

/** `http://<podIP>:<dashboard port>` from the status, when the head has been given both. */
export function dashboardFromStatus(obj: RayClusterObject | undefined): string | undefined {
  const ip = obj?.status?.head?.podIP;
  const port = obj?.status?.endpoints?.['dashboard'];
  return ip && port ? `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}` : undefined;
}
