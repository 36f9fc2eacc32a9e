import { createHash } from 'node:crypto';
import { type ClusterOwner, ClusterOwnerSchema } from '../../domain/cluster/cluster.js';

/**
 * Ownership marks on every RayCluster the product creates. Label values are limited to 63
 * characters of [A-Za-z0-9._-], and a Temporal workflow id is free text, so the full owner goes
 * into an annotation and the labels carry what selection needs: a hash of the workflow id, the
 * run id (a UUID) and the attempt.
 */
export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  experiment: 'ragen.dev/experiment',
  workflowHash: 'ragen.dev/workflow-id-hash',
  runId: 'ragen.dev/run-id',
  attempt: 'ragen.dev/attempt',
  /** spec.owner and spec.team: who the cluster's GPUs are for (a platform's quota and cost tools select by them). */
  user: 'ragen.dev/user',
  team: 'ragen.dev/team',
} as const;

export const ANNOTATIONS = {
  owner: 'ragen.dev/owner',
  workflowId: 'ragen.dev/workflow-id',
} as const;

export const MANAGED_BY = 'ragen-orchestrator';

/** Selects every RayCluster this product made (the reaper lists by it). */
export const MANAGED_SELECTOR = `${LABELS.managedBy}=${MANAGED_BY}`;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** 32 hex characters of sha256: a label-safe stand-in for a workflow id of any length. */
export function workflowIdHash(workflowId: string): string {
  return createHash('sha256').update(workflowId).digest('hex').slice(0, 32);
}

/** A label value as Kubernetes accepts it, or a hash where the text is not one. */
function labelValue(text: string): string {
  return text.length <= 63 && LABEL_VALUE.test(text) ? text : `h-${workflowIdHash(text)}`;
}

export function ownerLabels(owner: ClusterOwner): Record<string, string> {
  return {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.experiment]: labelValue(owner.experiment),
    [LABELS.workflowHash]: workflowIdHash(owner.workflowId),
    [LABELS.runId]: labelValue(owner.runId),
    [LABELS.attempt]: String(owner.attempt),
  };
}

/** The run's owner and team as labels (the spec validates them as label values); none when unset. */
export function accountLabels(spec: { owner?: string; team?: string }): Record<string, string> {
  return {
    ...(spec.owner ? { [LABELS.user]: spec.owner } : {}),
    ...(spec.team ? { [LABELS.team]: spec.team } : {}),
  };
}

export function ownerAnnotations(owner: ClusterOwner): Record<string, string> {
  return { [ANNOTATIONS.owner]: JSON.stringify(owner), [ANNOTATIONS.workflowId]: owner.workflowId };
}

export interface ObjectMarks {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * The owner recorded on an object, checked against its labels; a problem (instead of an owner)
 * when the marks are missing, malformed or disagree, so the reaper reports rather than deletes.
 */
export function readOwner(marks: ObjectMarks): { owner: ClusterOwner } | { problem: string } {
  const raw = marks.annotations?.[ANNOTATIONS.owner];
  if (!raw) return { problem: `annotation ${ANNOTATIONS.owner} is missing` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { problem: `annotation ${ANNOTATIONS.owner} is not JSON` };
  }
  const owner = ClusterOwnerSchema.safeParse(parsed);
  if (!owner.success)
    return {
      problem: `annotation ${ANNOTATIONS.owner} is malformed: ${owner.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    };
  const labels = marks.labels ?? {};
  const want = ownerLabels(owner.data);
  for (const key of [LABELS.workflowHash, LABELS.attempt] as const) {
    if (labels[key] !== want[key])
      return {
        problem: `label ${key}=${labels[key] ?? '(missing)'} does not match the owner annotation (${want[key]})`,
      };
  }
  return { owner: owner.data };
}

/** Whether an existing object was made for this owner (a retried create finds its own cluster). */
export function isOwnedBy(marks: ObjectMarks, owner: ClusterOwner): boolean {
  const labels = marks.labels ?? {};
  const want = ownerLabels(owner);
  return (
    labels[LABELS.managedBy] === MANAGED_BY &&
    labels[LABELS.workflowHash] === want[LABELS.workflowHash] &&
    labels[LABELS.attempt] === want[LABELS.attempt]
  );
}
