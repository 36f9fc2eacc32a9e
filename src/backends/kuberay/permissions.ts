/**
 * What the kuberay backend does in the Kubernetes API, and so all its identity needs: the
 * documented least-privilege set (deploy/worker/kuberay-rbac.yaml grants exactly this; preflight checks
 * the namespaced part with SelfSubjectAccessReview; a test fails when the identity can do more).
 */
export interface PermissionRule {
  group: string;
  resource: string;
  verbs: readonly string[];
  /** Cluster-scoped (a ClusterRole); the rest is a Role in the backend's namespace. */
  cluster?: true;
  /** Used only by preflight, which degrades without it (GPU capacity not checked, or a warning). */
  optional?: true;
}

export const KUBERAY_PERMISSIONS: readonly PermissionRule[] = [
  // Lifecycle (create, get, delete), status and the reaper (list, watch); never update or patch.
  { group: 'ray.io', resource: 'rayclusters', verbs: ['create', 'get', 'list', 'watch', 'delete'] },
  // Pod failures (image pull, crash loops) and teardown's wait: read-only.
  { group: '', resource: 'pods', verbs: ['list', 'watch'] },
  // The kubelet's probe failures on those Pods (an image without wget or bash): read-only.
  { group: '', resource: 'events', verbs: ['list'] },
  // The per-cluster Ray auth token: made, read, given its RayCluster as owner, deleted; listed by
  // label by the reaper (a token left by a submit that never made its RayCluster).
  { group: '', resource: 'secrets', verbs: ['create', 'get', 'list', 'update', 'delete'] },
  // The node ledger (a ConfigMap of link-suspect nodes): read at submit, written on a finding.
  { group: '', resource: 'configmaps', verbs: ['get', 'create', 'update'] },
  // Preflight: the storage claim exists and is bound.
  { group: '', resource: 'persistentvolumeclaims', verbs: ['get'] },
  // Preflight: may this identity do the above (also granted to every user by system:basic-user).
  { group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews', verbs: ['create'], cluster: true },
  { group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews', verbs: ['create'], cluster: true },
  // Preflight: allocatable GPUs.
  { group: '', resource: 'nodes', verbs: ['list'], cluster: true, optional: true },
];
