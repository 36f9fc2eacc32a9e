import type { ClusterOwner } from '../../domain/cluster/cluster.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { workerGroupSettings } from '../../domain/cluster/kuberay.js';
import { accountLabels, ownerAnnotations, ownerLabels } from './labels.js';
import { podSpec, rayContainer } from './pod-template.js';
import { withRayAuthEnv } from './auth-secret.js';

/** Kueue's label naming the LocalQueue a workload waits in. */
export const KUEUE_QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
/** Kueue's label naming the WorkloadPriorityClass of a workload. */
export const KUEUE_PRIORITY_CLASS_LABEL = 'kueue.x-k8s.io/priority-class';

/** ray.io/v1 RayCluster, as far as this product writes and reads it (KubeRay v1.5 field names). */
export const RAYCLUSTER = {
  group: 'ray.io',
  version: 'v1',
  plural: 'rayclusters',
  kind: 'RayCluster',
} as const;

/** KubeRay's limit on RayCluster names (MaxRayClusterNameLength). */
export const MAX_RAYCLUSTER_NAME = 53;

export interface RayClusterCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface RayClusterStatus {
  /** Deprecated by KubeRay and sticky once `ready`: never read for health. */
  state?: string;
  readyWorkerReplicas?: number;
  availableWorkerReplicas?: number;
  desiredWorkerReplicas?: number;
  desiredGPU?: string;
  endpoints?: Record<string, string>;
  head?: { podIP?: string; podName?: string; serviceIP?: string; serviceName?: string };
  conditions?: RayClusterCondition[];
  observedGeneration?: number;
  reason?: string;
}

export interface RayClusterObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec: Record<string, unknown>;
  status?: RayClusterStatus;
}

/** The link-suspect nodes a cluster was kept off, for people and for the platform (comma-separated). */
export const AVOIDED_NODES_ANNOTATION = 'ragen-orchestrator.io/avoided-nodes';

export interface RayClusterBuildInput {
  name: string;
  namespace: string;
  spec: ExperimentSpec;
  owner: ClusterOwner;
  /** Nodes the node ledger names as link suspects: no Pod of this cluster is scheduled on them. */
  avoidNodes?: readonly string[];
}

/**
 * Pure: the RayCluster for one experiment attempt. Head with `num-gpus: "0"` and the dashboard on
 * all interfaces; one worker group per spec group with replicas = minReplicas = maxReplicas (no
 * autoscaling: verl needs every node at once) and `nvidia.com/gpu` limits (KubeRay derives
 * `--num-gpus` from them); the image by digest; the shared PVC; owner labels and annotations.
 * No entrypoint is baked in: jobs go through the Ray Jobs API with every argument quoted.
 * Every Ray container runs with token auth, the token from the cluster's Secret (auth-secret.ts),
 * unless the spec says auth: none.
 */
export function buildRayCluster({
  name,
  namespace,
  spec,
  owner,
  avoidNodes = [],
}: RayClusterBuildInput): RayClusterObject {
  if (!spec.kuberay)
    throw new Error(
      'kuberay: spec.kuberay is required for the kuberay backend (storage.pvc and storage.mountPath)',
    );
  if (!spec.image) throw new Error('kuberay: spec.image is required for the kuberay backend');
  if (name.length > MAX_RAYCLUSTER_NAME)
    throw new Error(`RayCluster name ${name} is longer than KubeRay's ${MAX_RAYCLUSTER_NAME} characters`);
  const k = spec.kuberay;
  const labels = { ...ownerLabels(owner), ...accountLabels(spec) };
  const image = spec.image;
  const headGroup = k.head ?? {};
  const queue: Record<string, string> = {
    ...(k.queueName ? { [KUEUE_QUEUE_LABEL]: k.queueName } : {}),
    ...(k.kueuePriorityClass ? { [KUEUE_PRIORITY_CLASS_LABEL]: k.kueuePriorityClass } : {}),
  };
  // auth: none (an image whose Ray predates token auth): the containers get no token settings.
  const withAuth = <C extends { env?: unknown[] }>(c: C): C =>
    spec.auth === 'none' ? c : withRayAuthEnv(c, name);
  return {
    apiVersion: `${RAYCLUSTER.group}/${RAYCLUSTER.version}`,
    kind: RAYCLUSTER.kind,
    metadata: {
      name,
      namespace,
      labels: { ...labels, ...queue },
      annotations: {
        ...ownerAnnotations(owner),
        ...(avoidNodes.length ? { [AVOIDED_NODES_ANNOTATION]: avoidNodes.join(',') } : {}),
      },
    },
    spec: {
      rayVersion: spec.rayVersion,
      headGroupSpec: {
        rayStartParams: { 'num-gpus': '0', 'dashboard-host': '0.0.0.0' },
        template: {
          metadata: { labels },
          spec: podSpec(
            k,
            { kind: 'head' },
            headGroup,
            withAuth(
              rayContainer(k, {
                name: 'ray-head',
                image,
                cpus: spec.cluster.head.cpus,
                gpus: 0,
                group: headGroup,
                ports: [
                  { name: 'gcs-server', containerPort: 6379 },
                  { name: 'dashboard', containerPort: 8265 },
                  { name: 'client', containerPort: 10001 },
                ],
              }),
            ),
            avoidNodes,
          ),
        },
      },
      workerGroupSpecs: spec.cluster.workerGroups.map((g) => {
        const group = workerGroupSettings(k, g.name);
        return {
          groupName: g.name,
          replicas: g.replicas,
          minReplicas: g.replicas,
          maxReplicas: g.replicas,
          rayStartParams: {},
          template: {
            metadata: { labels },
            spec: podSpec(
              k,
              { kind: 'worker', cluster: name },
              group,
              withAuth(
                rayContainer(k, {
                  name: 'ray-worker',
                  image,
                  cpus: g.cpusPerWorker,
                  gpus: g.gpusPerWorker,
                  group,
                }),
              ),
              avoidNodes,
            ),
          },
        };
      }),
    },
  };
}
