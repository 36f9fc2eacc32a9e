import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';

/** Part of the stand-in kubelet: pure readings of a Pod spec (quantities, requests, env). */

const SUFFIX: Record<string, number> = {
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** A Kubernetes quantity ("500m", "2", "4Gi") as a number. */
export function quantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) throw new Error(`not a quantity: ${q}`);
  return Number(m[1]) * (m[2] ? (SUFFIX[m[2]] ?? NaN) : 1);
}

/** What the scheduler counts: the larger of any init container and the sum of the containers. */
export function podRequests(pod: V1Pod): Record<string, number> {
  const of = (c: V1Container) =>
    ({ ...c.resources?.limits, ...c.resources?.requests }) as Record<string, string>;
  const sum: Record<string, number> = {};
  for (const c of pod.spec?.containers ?? [])
    for (const [k, v] of Object.entries(of(c))) sum[k] = (sum[k] ?? 0) + quantity(v);
  for (const c of pod.spec?.initContainers ?? [])
    for (const [k, v] of Object.entries(of(c))) sum[k] = Math.max(sum[k] ?? 0, quantity(v));
  return sum;
}

/** `$(NAME)` references expanded from the variables defined so far; `$$(NAME)` escapes, as Kubernetes does. */
export function expand(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name: string | undefined) =>
    name === undefined ? '$' : (vars[name] ?? all),
  );
}

/** A fieldRef path on the Pod: metadata.name, metadata.labels['x'], status.podIP, spec.nodeName, ... */
export function fieldValue(pod: V1Pod, path: string): string {
  const indexed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (indexed)
    return (
      (indexed[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations)?.[indexed[2] ?? ''] ?? ''
    );
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata?.name,
    'metadata.namespace': pod.metadata?.namespace,
    'metadata.uid': pod.metadata?.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
    'status.podIP': pod.status?.podIP,
    'status.hostIP': pod.status?.hostIP,
  };
  if (!(path in fields)) throw new Error(`stand-in kubelet: fieldRef ${path} is not supported`);
  return fields[path] ?? '';
}

/** limits.cpu / requests.memory etc. of the container, rounded up as the kubelet does with divisor 1. */
export function resourceValue(c: V1Container, resource: string): string {
  const [kind, name] = resource.split('.') as ['limits' | 'requests', string];
  const v = quantity((c.resources?.[kind] as Record<string, string> | undefined)?.[name]);
  return String(Math.ceil(v));
}

export interface EnvSources {
  secret(name: string): Promise<Record<string, string> | undefined>;
  configMap(name: string): Promise<Record<string, string> | undefined>;
}

/**
 * The container's environment as the kubelet builds it: envFrom (Secrets, ConfigMaps), then env in
 * order with `$(VAR)` expansion, fieldRef, resourceFieldRef, secretKeyRef, configMapKeyRef.
 */
export async function containerEnv(
  pod: V1Pod,
  c: V1Container,
  base: Record<string, string>,
  sources: EnvSources,
): Promise<Record<string, string>> {
  const env: Record<string, string> = { ...base };
  for (const from of c.envFrom ?? []) {
    const name = from.secretRef?.name ?? from.configMapRef?.name ?? '';
    const data = from.secretRef ? await sources.secret(name) : await sources.configMap(name);
    const optional = from.secretRef?.optional ?? from.configMapRef?.optional ?? false;
    if (!data && !optional) throw new Error(`${from.secretRef ? 'secret' : 'configmap'} "${name}" not found`);
    for (const [k, v] of Object.entries(data ?? {})) env[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const e of c.env ?? []) env[e.name] = await envValue(pod, c, e, env, sources);
  return env;
}

async function envValue(
  pod: V1Pod,
  c: V1Container,
  e: V1EnvVar,
  vars: Record<string, string>,
  sources: EnvSources,
): Promise<string> {
  if (e.value !== undefined) return expand(e.value, vars);
  const from = e.valueFrom;
  if (!from) return '';
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath);
  if (from.resourceFieldRef) return resourceValue(c, from.resourceFieldRef.resource);
  const ref = from.secretKeyRef ?? from.configMapKeyRef;
  if (ref) {
    const kind = from.secretKeyRef ? 'secret' : 'configmap';
    const data = from.secretKeyRef
      ? await sources.secret(ref.name ?? '')
      : await sources.configMap(ref.name ?? '');
    const value = data?.[ref.key];
    if (value === undefined && !ref.optional)
      throw new Error(`couldn't find key ${ref.key} in ${kind} ${pod.metadata?.namespace}/${ref.name}`);
    return value ?? '';
  }
  return '';
}

/**
 * The image's user when neither the Pod nor the container names one: rayproject/ray images run as
 * `ray`, uid 1000, primary group 100 (users). The stand-in has no image to read it from, so every
 * container runs as that user unless its securityContext says otherwise: kuberay tests exercise a
 * non-root image.
 */
export const IMAGE_USER = { uid: 1000, gid: 100 } as const;

export interface ContainerIdentity {
  uid: number;
  gid: number;
  /** Supplementary groups: the Pod's fsGroup and supplementalGroups, as the runtime adds them. */
  groups: number[];
}

/** Who a container's processes run as: the container's securityContext over the Pod's, over the image's user. */
export function containerIdentity(pod: V1Pod, c: V1Container): ContainerIdentity {
  const podSc = pod.spec?.securityContext;
  const uid = c.securityContext?.runAsUser ?? podSc?.runAsUser ?? IMAGE_USER.uid;
  const gid = c.securityContext?.runAsGroup ?? podSc?.runAsGroup ?? IMAGE_USER.gid;
  const groups = [
    ...(podSc?.fsGroup !== undefined ? [podSc.fsGroup] : []),
    ...(podSc?.supplementalGroups ?? []),
  ];
  return { uid, gid, groups: [...new Set(groups)].filter((g) => g !== gid) };
}
