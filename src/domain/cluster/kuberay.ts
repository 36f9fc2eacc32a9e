import { z } from 'zod';
import { parseQuantity } from './quantity.js';

/**
 * The `kuberay:` section of an experiment spec: the shared volume, and what a real image needs in
 * its head and worker Pod templates (working directory, memory, /dev/shm, secrets by name,
 * placement, Kueue queue). Read only when backend is kuberay.
 */

const AbsolutePath = z.string().refine((p) => p.startsWith('/'), {
  message: 'must be an absolute path inside the image; write it starting with /',
});
const PositiveInt = z.number().int().positive();

export const DnsLabel = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'a Kubernetes name: 1-63 lowercase letters, digits and -');

/** Secret, PriorityClass and other object names (RFC 1123 subdomain). */
const ObjectName = z
  .string()
  .max(253)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    'a Kubernetes object name: lowercase letters, digits, - and . (as in kubectl get secret)',
  );

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LabelKey = z.string().refine(
  (key) => {
    const slash = key.lastIndexOf('/');
    const prefix = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    return (
      LABEL_NAME.test(name) &&
      (prefix === undefined || (prefix.length <= 253 && ObjectName.safeParse(prefix).success))
    );
  },
  {
    message: 'a node label key such as kubernetes.io/arch or gpu-type ([prefix/]name, name 1-63 characters)',
  },
);
const LabelValue = z.string().refine((v) => v === '' || LABEL_NAME.test(v), {
  message: 'a label value: up to 63 letters, digits, -, _ and .',
});

/** A memory quantity as Kubernetes writes it (`16Gi`, `512Mi`); a bare number means bytes. */
const MemoryQuantity = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .refine((v) => (parseQuantity(v) ?? 0) >= 1, {
    message: 'a memory quantity such as 16Gi or 512Mi (Ki, Mi, Gi, Ti or k, M, G, T)',
  });

const TolerationSchema = z
  .strictObject({
    key: LabelKey.optional(),
    operator: z.enum(['Equal', 'Exists']).default('Equal'),
    value: LabelValue.optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().min(0).optional(),
  })
  .superRefine((t, ctx) => {
    if (t.operator === 'Exists' && t.value !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: 'operator Exists takes no value; remove value or use operator Equal',
      });
    }
    if (t.operator === 'Equal' && t.key === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['key'],
        message:
          'operator Equal needs a key; give the taint key or use operator Exists to tolerate every taint',
      });
    }
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      ctx.addIssue({
        code: 'custom',
        path: ['tolerationSeconds'],
        message: 'tolerationSeconds applies only to effect NoExecute; set effect: NoExecute or remove it',
      });
    }
  });

/** Settings of one kind of Ray pod (the head, or the workers of a group). */
export const PodGroupSchema = z
  .strictObject({
    /** The Ray container's working directory (RAGEN's `python train.py` runs from its checkout). */
    workingDir: AbsolutePath.optional(),
    /** Memory request; the limit is the same unless memoryLimit says otherwise. */
    memory: MemoryQuantity.optional(),
    memoryLimit: MemoryQuantity.optional(),
    /** A CPU limit; none by default (the CPUs are requested; a tight limit throttles the trainer). */
    cpuLimit: z.number().positive().optional(),
    /** /dev/shm size; by default KubeRay sizes it to the memory limit (unbounded with no memory set). */
    shmSize: MemoryQuantity.optional(),
    nodeSelector: z.record(LabelKey, LabelValue).optional(),
    tolerations: z.array(TolerationSchema).optional(),
  })
  .superRefine((g, ctx) => {
    const request = g.memory === undefined ? undefined : parseQuantity(g.memory);
    const limit = g.memoryLimit === undefined ? request : parseQuantity(g.memoryLimit);
    if (request !== undefined && limit !== undefined && limit < request) {
      ctx.addIssue({
        code: 'custom',
        path: ['memoryLimit'],
        message: `memoryLimit ${g.memoryLimit} is below the request memory ${g.memory}; raise memoryLimit or lower memory`,
      });
    }
    const shm = g.shmSize === undefined ? undefined : parseQuantity(g.shmSize);
    if (shm !== undefined && limit !== undefined && shm > limit) {
      ctx.addIssue({
        code: 'custom',
        path: ['shmSize'],
        message: `shmSize ${g.shmSize} is above the memory limit ${g.memoryLimit ?? g.memory}: /dev/shm is memory-backed and counts against it; lower shmSize or raise the memory`,
      });
    }
  });
export type PodGroupSettings = z.infer<typeof PodGroupSchema>;

const EnvName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'an environment variable name: letters, digits and _, not starting with a digit',
  );

/** A value read from a key of a Kubernetes Secret by the kubelet: the spec names it, never holds it. */
const SecretKeyRefSchema = z.strictObject({
  secret: ObjectName,
  key: z.string().regex(/^[-._a-zA-Z0-9]+$/, 'a Secret key: letters, digits, -, _ and .'),
});
export type SecretKeyRef = z.infer<typeof SecretKeyRefSchema>;

/** Names that hold credentials by convention; a literal value for one would be written in the clear. */
const SECRET_LOOKING = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL)/i;

/** A Linux user or group id as Kubernetes takes it (0 is root). */
const LinuxId = (what: string) =>
  z
    .number({
      message: `a numeric ${what} id such as 1000 (names are not accepted: Kubernetes takes numbers)`,
    })
    .int(`a whole-number ${what} id such as 1000`)
    .min(0, `a ${what} id is 0 (root) or more`)
    .max(2147483647, `a ${what} id below 2^31`);

/**
 * Who the Ray containers run as (the Pods' securityContext). Unset fields keep the image's own
 * user (rayproject/ray images: uid 1000, gid 100). fsGroup is added to every container's groups;
 * the worker gives the run's folders on the shared volume that group (else runAsGroup), 2775, so
 * the Pods can write their checkpoints there whoever they run as.
 */
export const SecurityContextSchema = z.strictObject({
  runAsUser: LinuxId('user').optional(),
  runAsGroup: LinuxId('group').optional(),
  fsGroup: LinuxId('group').optional(),
});
export type PodSecurityContext = z.infer<typeof SecurityContextSchema>;

export const KubeRaySchema = z
  .strictObject({
    /** The shared volume every Ray pod mounts: checkpoints and archives must live under mountPath. */
    storage: z.strictObject({ pvc: DnsLabel, mountPath: AbsolutePath }),
    /** What preflight does when the nodes' allocatable nvidia.com/gpu is below the request. */
    gpuCapacity: z.enum(['refuse', 'warn']).default('refuse'),
    /** User, group and fsGroup of the Ray Pods (head and workers); unset: the image's user. */
    securityContext: SecurityContextSchema.optional(),
    /** Service account of the Ray pods (default: the namespace's default). */
    serviceAccount: DnsLabel.optional(),
    head: PodGroupSchema.optional(),
    /** Settings for every worker group... */
    workers: PodGroupSchema.optional(),
    /** ...and per group (by cluster.workerGroups[].name), field by field over `workers`. */
    workerGroups: z.record(z.string(), PodGroupSchema).optional(),
    /** Environment of every Ray container: a plain value, or {secret, key} read by the kubelet. */
    env: z.record(EnvName, z.union([z.string(), z.number(), z.boolean(), SecretKeyRefSchema])).optional(),
    /** Every key of these Secrets becomes an environment variable (optionally prefixed). */
    envFrom: z
      .array(
        z.strictObject({
          secret: ObjectName,
          prefix: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable prefix such as WANDB_')
            .optional(),
        }),
      )
      .optional(),
    /** Secrets of type kubernetes.io/dockerconfigjson the kubelet pulls the image with. */
    imagePullSecrets: z.array(ObjectName).optional(),
    /** Required pod anti-affinity: no two workers of this cluster on one node. */
    oneWorkerPerNode: z.boolean().optional(),
    priorityClassName: ObjectName.optional(),
    /** Kueue LocalQueue (label kueue.x-k8s.io/queue-name): the cluster waits suspended until admitted. */
    queueName: z
      .string()
      .max(63)
      .regex(LABEL_NAME, 'a Kueue LocalQueue name (a label value: up to 63 letters, digits, -, _ and .)')
      .optional(),
    /**
     * Kueue WorkloadPriorityClass (label kueue.x-k8s.io/priority-class): in a ClusterQueue that
     * preempts by priority, a higher one takes the quota of running lower ones (Kueue suspends
     * their RayClusters; a campaign records the preemption and resumes when readmitted).
     */
    kueuePriorityClass: z
      .string()
      .max(63)
      .regex(LABEL_NAME, 'a Kueue WorkloadPriorityClass name (a label value)')
      .optional(),
    /** How long a queued cluster may wait for Kueue's admission before the run fails. */
    admissionSeconds: PositiveInt.default(24 * 3600),
  })
  .superRefine((k, ctx) => {
    for (const [name, value] of Object.entries(k.env ?? {})) {
      if (typeof value !== 'object' && SECRET_LOOKING.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['env', name],
          message: `${name} looks like a credential: a literal value would be written in the clear to the RayCluster, the workflow history and the manifest; put it in a Kubernetes Secret (kubectl create secret generic <name> --from-literal=<key>=...) and write ${name}: {secret: <name>, key: <key>}`,
        });
      }
    }
  });
export type KubeRaySettings = z.infer<typeof KubeRaySchema>;

/** Cross-section checks (the worker group names and CPU requests live under cluster). */
export function kuberayIssues(
  k: KubeRaySettings,
  cluster: { head: { cpus: number }; workerGroups: { name: string; cpusPerWorker: number }[] },
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const names = cluster.workerGroups.map((g) => g.name);
  for (const name of Object.keys(k.workerGroups ?? {})) {
    if (!names.includes(name)) {
      issues.push({
        path: ['kuberay', 'workerGroups', name],
        message: `no worker group named ${name} in cluster.workerGroups (${names.join(', ')}); use one of those names`,
      });
    }
  }
  const cpuIssue = (
    path: (string | number)[],
    limit: number | undefined,
    request: number,
    requestField: string,
  ) => {
    if (limit !== undefined && limit < request) {
      issues.push({
        path,
        message: `cpuLimit ${limit} is below the ${request} CPUs requested by ${requestField}; raise cpuLimit or remove it (no limit is the default)`,
      });
    }
  };
  cpuIssue(['kuberay', 'head', 'cpuLimit'], k.head?.cpuLimit, cluster.head.cpus, 'cluster.head.cpus');
  for (const g of cluster.workerGroups) {
    const own = k.workerGroups?.[g.name]?.cpuLimit;
    const path =
      own !== undefined
        ? ['kuberay', 'workerGroups', g.name, 'cpuLimit']
        : ['kuberay', 'workers', 'cpuLimit'];
    cpuIssue(
      path,
      own ?? k.workers?.cpuLimit,
      g.cpusPerWorker,
      `cluster.workerGroups ${g.name}.cpusPerWorker`,
    );
  }
  return issues;
}

/** A worker group's settings: its own fields over the `workers` ones (whole fields, not merged deeper). */
export function workerGroupSettings(k: KubeRaySettings, group: string): PodGroupSettings {
  const own = Object.fromEntries(
    Object.entries(k.workerGroups?.[group] ?? {}).filter(([, v]) => v !== undefined),
  );
  return { ...k.workers, ...own };
}
