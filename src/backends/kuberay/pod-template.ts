import type { KubeRaySettings, PodGroupSettings } from '../../domain/cluster/kuberay.js';

/**
 * Pure pieces of the head and worker Pod templates: what a real image needs besides the image
 * (working directory, resources, /dev/shm, environment from Secrets by name, pull secrets,
 * placement). KubeRay v1.5 copies the template into each Pod and adds its own parts (the ray start
 * command, probes, the wait-gcs-ready init container, a /dev/shm emptyDir unless one is mounted).
 */

const STORAGE_VOLUME = 'ragen-storage';
/** KubeRay's own name for it; KubeRay skips adding its /dev/shm when the container mounts one. */
const SHM_VOLUME = 'shared-mem';

export interface RayContainerInput {
  name: 'ray-head' | 'ray-worker';
  image: string;
  cpus: number;
  gpus: number;
  group: PodGroupSettings;
  ports?: { name: string; containerPort: number }[];
}

/**
 * Requests: the CPUs, the memory, the GPUs. Limits: GPUs (KubeRay reads `--num-gpus` from them),
 * memory (the request unless memoryLimit is set: KubeRay gives Ray `--memory` and /dev/shm its size
 * from the limit), and CPU only when cpuLimit asks for one (KubeRay then takes `--num-cpus` from
 * it; else from the request).
 */
export function containerResources(cpus: number, gpus: number, g: PodGroupSettings) {
  const gpu = gpus > 0 ? { 'nvidia.com/gpu': String(gpus) } : {};
  const memoryLimit = g.memoryLimit ?? g.memory;
  return {
    requests: { cpu: String(cpus), ...(g.memory ? { memory: g.memory } : {}), ...gpu },
    limits: {
      ...(g.cpuLimit !== undefined ? { cpu: String(g.cpuLimit) } : {}),
      ...(memoryLimit ? { memory: memoryLimit } : {}),
      ...gpu,
    },
  };
}

/** `env` entries: literal values as strings, Secret keys as secretKeyRef (the value never leaves the Secret). */
export function containerEnv(k: KubeRaySettings) {
  return Object.entries(k.env ?? {}).map(([name, value]) =>
    typeof value === 'object'
      ? { name, valueFrom: { secretKeyRef: { name: value.secret, key: value.key } } }
      : { name, value: String(value) },
  );
}

export function containerEnvFrom(k: KubeRaySettings) {
  return (k.envFrom ?? []).map((e) => ({
    ...(e.prefix ? { prefix: e.prefix } : {}),
    secretRef: { name: e.secret },
  }));
}

/**
 * The Node a Pod runs on, as the probe reports it (probes' NODE_NAME_ENV): the link test's suspects
 * are recorded under the name the scheduler's node affinity uses.
 */
export const NODE_NAME_ENV = {
  name: 'RAGEN_ORCH_NODE_NAME',
  valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } },
};

export function rayContainer(k: KubeRaySettings, c: RayContainerInput) {
  const env = [...containerEnv(k), NODE_NAME_ENV];
  const envFrom = containerEnvFrom(k);
  const volumeMounts: { name: string; mountPath: string }[] = [
    { name: STORAGE_VOLUME, mountPath: k.storage.mountPath },
  ];
  if (c.group.shmSize) volumeMounts.push({ name: SHM_VOLUME, mountPath: '/dev/shm' });
  return {
    name: c.name,
    image: c.image,
    ...(c.group.workingDir ? { workingDir: c.group.workingDir } : {}),
    ...(c.ports ? { ports: c.ports } : {}),
    ...(env.length ? { env } : {}),
    ...(envFrom.length ? { envFrom } : {}),
    resources: containerResources(c.cpus, c.gpus, c.group),
    volumeMounts,
  };
}

/** Required anti-affinity against the cluster's other workers (KubeRay labels every Pod it makes). */
function oneWorkerPerNode(cluster: string) {
  return {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        {
          labelSelector: { matchLabels: { 'ray.io/cluster': cluster, 'ray.io/node-type': 'worker' } },
          topologyKey: 'kubernetes.io/hostname',
        },
      ],
    },
  };
}

/**
 * Required node affinity that keeps a Pod off the node ledger's link suspects (NotIn on
 * kubernetes.io/hostname); the scheduler ANDs it with the group's nodeSelector and tolerations.
 */
export function avoidNodesAffinity(avoid: readonly string[]) {
  if (!avoid.length) return {};
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: [...avoid] }] },
        ],
      },
    },
  };
}

export function podSpec(
  k: KubeRaySettings,
  role: { kind: 'head' } | { kind: 'worker'; cluster: string },
  group: PodGroupSettings,
  container: ReturnType<typeof rayContainer>,
  avoidNodes: readonly string[] = [],
) {
  const affinity = {
    ...(role.kind === 'worker' && k.oneWorkerPerNode ? oneWorkerPerNode(role.cluster) : {}),
    ...avoidNodesAffinity(avoidNodes),
  };
  const volumes: Record<string, unknown>[] = [
    { name: STORAGE_VOLUME, persistentVolumeClaim: { claimName: k.storage.pvc } },
  ];
  if (group.shmSize)
    volumes.push({ name: SHM_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: group.shmSize } });
  return {
    ...(k.securityContext && Object.keys(k.securityContext).length
      ? { securityContext: { ...k.securityContext } }
      : {}),
    ...(k.serviceAccount ? { serviceAccountName: k.serviceAccount } : {}),
    ...(k.imagePullSecrets?.length ? { imagePullSecrets: k.imagePullSecrets.map((name) => ({ name })) } : {}),
    ...(k.priorityClassName ? { priorityClassName: k.priorityClassName } : {}),
    ...(group.nodeSelector ? { nodeSelector: group.nodeSelector } : {}),
    ...(group.tolerations?.length ? { tolerations: group.tolerations } : {}),
    ...(Object.keys(affinity).length ? { affinity } : {}),
    volumes,
    containers: [container],
  };
}
