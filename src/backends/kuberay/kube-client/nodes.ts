import { type KubeTransport, MERGE_PATCH } from './transport.js';

/** Nodes (cluster-scoped): preflight's GPU capacity and the link-suspect labels (node-labels.ts). */
export class NodesClient {
  constructor(private readonly transport: KubeTransport) {}

  /** Allocatable nvidia.com/gpu summed over schedulable nodes. */
  async allocatableGpus(): Promise<{ gpus: number; nodes: number }> {
    const list = await this.transport.call({ verb: 'list', resource: 'nodes' }, ({ core }) =>
      core.listNode(),
    );
    let gpus = 0;
    let nodes = 0;
    for (const node of list.items) {
      if (node.spec?.unschedulable) continue;
      nodes++;
      gpus += Number(node.status?.allocatable?.['nvidia.com/gpu'] ?? 0);
    }
    return { gpus, nodes };
  }

  /** The Nodes a label selector finds: name to annotations. */
  async annotations(labelSelector: string): Promise<Map<string, Record<string, string>>> {
    const list = await this.transport.call({ verb: 'list', resource: 'nodes' }, ({ core }) =>
      core.listNode({ labelSelector }),
    );
    return new Map(
      list.items
        .filter((n) => n.metadata?.name)
        .map((n) => [n.metadata!.name!, n.metadata?.annotations ?? {}]),
    );
  }

  /** Merge-patch a Node's labels and annotations (null removes a key); false when no such Node. */
  async patchMetadata(
    name: string,
    metadata: { labels: Record<string, string | null>; annotations: Record<string, string | null> },
  ): Promise<boolean> {
    const patched = await this.transport.found({ verb: 'patch', resource: 'nodes', name }, ({ core }) =>
      core.patchNode({ name, body: { metadata } }, MERGE_PATCH),
    );
    return patched !== undefined;
  }
}
