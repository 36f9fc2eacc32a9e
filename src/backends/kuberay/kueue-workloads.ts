/** kueue.x-k8s.io Workloads, as far as this product reads them (Kueue v0.17 field names). */
export const WORKLOAD = {
  group: 'kueue.x-k8s.io',
  version: 'v1beta2',
  plural: 'workloads',
} as const;

export interface WorkloadObject {
  metadata: {
    name: string;
    creationTimestamp?: string;
    ownerReferences?: { kind: string; name: string }[];
  };
  spec?: { queueName?: string; priority?: number; active?: boolean };
  status?: { conditions?: { type: string; status: string }[] };
}

const isTrue = (w: WorkloadObject, type: string) =>
  (w.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** Waiting for quota: neither holding it (QuotaReserved, which admission follows) nor finished. */
const isPending = (w: WorkloadObject) =>
  w.spec?.active !== false && !isTrue(w, 'QuotaReserved') && !isTrue(w, 'Finished');

/**
 * Pure: the 1-based place of a RayCluster's Workload among the pending Workloads of its LocalQueue,
 * in the order Kueue's queues take them (StrictFIFO and BestEffortFIFO alike): higher priority
 * first, then older first (creation time; the name breaks a tie so the answer is stable). 1 means
 * it is next. Undefined when the cluster has no pending Workload (none made yet, or admitted).
 * Workloads of other LocalQueues that share the ClusterQueue are not counted: this worker may only
 * see its own namespace, and a LocalQueue is what a Kueue user submits to (`kubectl get workloads
 * -n <ns>` lists the same order).
 */
export function queuePosition(workloads: readonly WorkloadObject[], cluster: string): number | undefined {
  const own = workloads.find((w) =>
    (w.metadata.ownerReferences ?? []).some((o) => o.kind === 'RayCluster' && o.name === cluster),
  );
  if (!own || !isPending(own)) return undefined;
  const ahead = (w: WorkloadObject) => {
    const [pw, po] = [w.spec?.priority ?? 0, own.spec?.priority ?? 0];
    if (pw !== po) return pw > po;
    const [cw, co] = [w.metadata.creationTimestamp ?? '', own.metadata.creationTimestamp ?? ''];
    if (cw !== co) return cw < co;
    return w.metadata.name < own.metadata.name;
  };
  const sameQueue = workloads.filter(
    (w) => w !== own && isPending(w) && w.spec?.queueName === own.spec?.queueName,
  );
  return 1 + sameQueue.filter(ahead).length;
}
