import type { NodeSuspect } from '../../domain/node-health/node-ledger.js';
import type { NodesClient } from './kube-client/nodes.js';

/**
 * The label a platform acts on (a taint, a drain, an alert): on each Node the node ledger names as
 * a live link suspect, removed when the entry is cleared or expires. The ledger stays the truth the
 * orchestrator avoids nodes by; the label is its copy for the platform. Off unless
 * RAGEN_LABEL_SUSPECT_NODES=1: patching Nodes needs a ClusterRole (deploy/worker/node-labels-rbac.yaml).
 */
export const LINK_SUSPECT_LABEL = 'ragen-orchestrator.io/link-suspect';
/** Why and until when, on the labelled Node (a label value cannot hold either). */
export const LINK_SUSPECT_REASON_ANNOTATION = 'ragen-orchestrator.io/link-suspect-reason';
export const LINK_SUSPECT_UNTIL_ANNOTATION = 'ragen-orchestrator.io/link-suspect-until';

export interface LabelSync {
  /** Nodes patched now (a Node already labelled with the same expiry is left as it is). */
  labelled: string[];
  unlabelled: string[];
  /** Suspects with no Node of that name (named by IP, or on another cluster). */
  absent: string[];
}

/**
 * Label the live suspects' Nodes and unlabel every other Node that carries the label. One list of
 * the labelled Nodes; a patch only where a Node's label or expiry differs from the ledger (it runs
 * at every submit).
 */
export async function syncSuspectLabels(nodes: NodesClient, live: NodeSuspect[]): Promise<LabelSync> {
  const labelled = await nodes.annotations(LINK_SUSPECT_LABEL);
  const sync: LabelSync = { labelled: [], unlabelled: [], absent: [] };
  for (const s of live) {
    if (labelled.get(s.node)?.[LINK_SUSPECT_UNTIL_ANNOTATION] === s.expires) continue; // already so
    const found = await nodes.patchMetadata(s.node, {
      labels: { [LINK_SUSPECT_LABEL]: 'true' },
      annotations: { [LINK_SUSPECT_REASON_ANNOTATION]: s.reason, [LINK_SUSPECT_UNTIL_ANNOTATION]: s.expires },
    });
    (found ? sync.labelled : sync.absent).push(s.node);
  }
  const keep = new Set(live.map((s) => s.node));
  for (const node of labelled.keys()) {
    if (keep.has(node)) continue;
    await nodes.patchMetadata(node, {
      labels: { [LINK_SUSPECT_LABEL]: null },
      annotations: { [LINK_SUSPECT_REASON_ANNOTATION]: null, [LINK_SUSPECT_UNTIL_ANNOTATION]: null },
    });
    sync.unlabelled.push(node);
  }
  return sync;
}
