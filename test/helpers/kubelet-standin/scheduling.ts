import type { V1LabelSelector, V1NodeSelectorRequirement, V1Pod } from '@kubernetes/client-node';

/**
 * Part of the stand-in scheduler: the predicates kube-scheduler applies that the product's Pods
 * use (required node affinity, required pod anti-affinity on kubernetes.io/hostname), and its way
 * of summing per-node reasons into one message ("0/4 nodes are available: 3 node(s) didn't ...").
 */

function requirementHolds(r: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const value = labels[r.key];
  switch (r.operator) {
    case 'In':
      return value !== undefined && (r.values ?? []).includes(value);
    case 'NotIn':
      return value === undefined || !(r.values ?? []).includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      throw new Error(`stand-in scheduler: node affinity operator ${r.operator} is not supported`);
  }
}

/** requiredDuringScheduling node affinity: any term whose every expression holds (terms are ORed). */
export function matchesNodeAffinity(pod: V1Pod, labels: Record<string, string>): boolean {
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return true;
  return terms.some((t) => (t.matchExpressions ?? []).every((r) => requirementHolds(r, labels)));
}

function selects(selector: V1LabelSelector, labels: Record<string, string>): boolean {
  if (selector.matchExpressions?.length)
    throw new Error('stand-in scheduler: matchExpressions in pod anti-affinity are not supported');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

/** Required pod anti-affinity by hostname: a Pod on this node that the Pod's terms select. */
export function violatesAntiAffinity(pod: V1Pod, onNode: V1Pod[]): boolean {
  const terms = pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  return terms.some((t) => {
    if (t.topologyKey !== 'kubernetes.io/hostname')
      throw new Error(`stand-in scheduler: anti-affinity topologyKey ${t.topologyKey} is not supported`);
    return onNode.some(
      (p) =>
        p.metadata?.uid !== pod.metadata?.uid &&
        t.labelSelector &&
        selects(t.labelSelector, p.metadata?.labels ?? {}),
    );
  });
}

/** Per-node reasons counted, as kube-scheduler words them: "2 node(s) didn't match ..., 1 Insufficient cpu". */
export function summarize(reasons: string[]): string {
  const counts = new Map<string, number>();
  for (const r of reasons) {
    const text = r.replace(/^1 /, '');
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].map(([text, n]) => `${n} ${text}`).join(', ');
}
