import { isDomainError } from '../../errors/domain-error.js';
import { type ExperimentSpec, workerGpus } from '../../domain/spec/experiment.js';
import type { PreflightCheck } from '../backend.js';
import type { AccessReviewsClient } from './kube-client/access-reviews.js';
import type { KubeClients } from './kube-client/clients.js';
import type { PodsClient } from './kube-client/pods.js';
import { KUBERAY_PERMISSIONS } from './permissions.js';
import { LINK_SUSPECT_LABEL } from './node-labels.js';
import { rulesAllow } from './resource-rules.js';

/** The namespaced permissions of the lifecycle (the PVC has its own check below). */
const NEEDED = KUBERAY_PERMISSIONS.filter((p) => !p.cluster && p.resource !== 'persistentvolumeclaims');

/**
 * What the namespace's rules review grants; nothing when it is refused, fails, or is incomplete (an
 * authorizer that cannot list its rules may also deny what RBAC grants).
 */
async function grantedByRules(
  access: AccessReviewsClient,
): Promise<(verb: string, resource: string, group: string) => boolean> {
  const review = await access.namespaceRules().catch(() => undefined);
  if (!review?.complete) return () => false;
  return (verb, resource, group) => rulesAllow(review.rules, verb, resource, group);
}

/**
 * KubeRay preflight: the ray.io/v1 RayCluster CRD is served; SelfSubjectRulesReview (then
 * SelfSubjectAccessReview for anything it does not confirm) allows every
 * verb the lifecycle needs in the namespace; the nodes' allocatable nvidia.com/gpu covers the
 * request (a shortfall refuses or warns, per spec.kuberay.gpuCapacity); the storage PVC exists.
 * Creates nothing.
 */
export async function kuberayPreflight(
  kube: Pick<KubeClients, 'rayClusters' | 'accessReviews' | 'nodes' | 'pods'>,
  spec: ExperimentSpec,
  labelNodes = false,
): Promise<PreflightCheck[]> {
  const access = kube.accessReviews;
  const checks: PreflightCheck[] = [];
  const crd = await kube.rayClusters.crd();
  checks.push({ name: 'kuberay-crd', ok: crd.installed, detail: crd.detail });

  // One rules review confirms what the rules grant; only a verb it does not confirm costs an
  // access review of its own (which decides: it sees every authorizer).
  const granted = await grantedByRules(access);
  const missing: string[] = [];
  for (const { resource, group, verbs } of NEEDED) {
    const denied: string[] = [];
    for (const verb of verbs) {
      if (granted(verb, resource, group)) continue;
      const review = await access.canI(verb, resource, group);
      if (!review.allowed) denied.push(verb);
    }
    const name = group ? `${resource}.${group}` : resource;
    if (denied.length)
      missing.push(
        `${access.identity} cannot ${denied.join(', ')} ${name} in namespace ${access.namespace}; grant verbs [${denied.join(', ')}] on resource ${resource} (apiGroup ${group || '""'})`,
      );
  }
  checks.push({
    name: 'kuberay-permissions',
    ok: missing.length === 0,
    detail:
      missing.length === 0
        ? `${access.identity} may ${NEEDED.map((p) => `${p.verbs.join('/')} ${p.group ? `${p.resource}.${p.group}` : p.resource}`).join(', ')} in namespace ${access.namespace}`
        : `missing permission: ${missing.join('; ')} with a Role and RoleBinding (deploy/worker/kuberay-rbac.yaml)`,
  });

  const want = workerGpus(spec);
  const mode = spec.kuberay?.gpuCapacity ?? 'refuse';
  try {
    const { gpus, nodes } = await kube.nodes.allocatableGpus();
    const enough = gpus >= want;
    checks.push({
      name: 'kuberay-gpu-capacity',
      ok: enough || mode === 'warn',
      detail: `${gpus} allocatable nvidia.com/gpu on ${nodes} schedulable nodes, ${want} requested${enough ? '' : mode === 'warn' ? ' (WARNING: not enough now; kuberay.gpuCapacity is warn, so the run waits for capacity under deadlines.joinSeconds)' : '; add GPU nodes, lower the request, or set kuberay.gpuCapacity: warn to wait for capacity'}`,
    });
  } catch (err) {
    // Listing nodes is a cluster-scoped permission many namespaced identities lack.
    checks.push({
      name: 'kuberay-gpu-capacity',
      ok: mode === 'warn',
      detail: `could not read node capacity: ${(err as Error).message}${mode === 'warn' ? ' (WARNING only: kuberay.gpuCapacity is warn)' : '; grant list on nodes, or set kuberay.gpuCapacity: warn'}`,
    });
  }

  if (labelNodes) checks.push(await nodeLabelCheck(access));

  const pvc = spec.kuberay?.storage.pvc ?? '';
  let found: Awaited<ReturnType<PodsClient['claim']>>;
  try {
    found = await kube.pods.claim(pvc);
  } catch (err) {
    // A refusal (403) is a finding; an unreachable API server is not, and is retried.
    if (!(isDomainError(err) && err.permanent)) throw err;
    checks.push({ name: 'kuberay-storage-pvc', ok: false, detail: err.message });
    return checks;
  }
  checks.push(storageCheck(pvc, access.namespace, found));
  return checks;
}

/**
 * Pure: the PVC must exist and be ReadWriteMany: the head, every worker and the orchestrator's
 * worker mount it at once, on different nodes (ReadWriteOnce binds it to one node; a second pod
 * elsewhere waits forever in ContainerCreating).
 */
export function storageCheck(
  pvc: string,
  namespace: string,
  found: { phase: string; accessModes: string[] } | undefined,
): PreflightCheck {
  if (!found) {
    return {
      name: 'kuberay-storage-pvc',
      ok: false,
      detail: `PersistentVolumeClaim ${pvc} does not exist in namespace ${namespace}; create it (ReadWriteMany, shared by every Ray pod) or fix kuberay.storage.pvc`,
    };
  }
  const modes = found.accessModes.length ? found.accessModes.join(', ') : 'none';
  if (!found.accessModes.includes('ReadWriteMany')) {
    return {
      name: 'kuberay-storage-pvc',
      ok: false,
      detail: `PersistentVolumeClaim ${pvc} has access modes [${modes}], not ReadWriteMany: the Ray pods and the orchestrator's worker mount it at once from different nodes; create a ReadWriteMany claim (an NFS, CephFS, EFS or Filestore storage class) and set kuberay.storage.pvc to it`,
    };
  }
  return {
    name: 'kuberay-storage-pvc',
    ok: true,
    detail: `PersistentVolumeClaim ${pvc} exists (phase ${found.phase}, access modes [${modes}])`,
  };
}

/** RAGEN_LABEL_SUSPECT_NODES=1 (node-labels.ts): the identity may list and patch Nodes. */
async function nodeLabelCheck(access: AccessReviewsClient): Promise<PreflightCheck> {
  const denied: string[] = [];
  for (const verb of ['list', 'patch'])
    if (!(await access.canI(verb, 'nodes', '')).allowed) denied.push(verb);
  return {
    name: 'kuberay-node-labels',
    ok: denied.length === 0,
    detail: denied.length
      ? `RAGEN_LABEL_SUSPECT_NODES=1 but ${access.identity} cannot ${denied.join(', ')} nodes: apply deploy/worker/node-labels-rbac.yaml (a ClusterRole), or set RAGEN_LABEL_SUSPECT_NODES=0`
      : `${access.identity} may list/patch nodes: link-suspect Nodes get the label ${LINK_SUSPECT_LABEL}`,
  };
}
