import { z } from 'zod';
import type { ComputeBackend } from '../../backends/backend.js';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { type NodeFinding, recordFindings } from '../../domain/node-health/node-ledger.js';

/** The part of the probe's result line that names suspects (probes/ragen_probes/allreduce.py). */
const LinksSchema = z.object({
  links: z.object({
    median_gbps: z.number(),
    suspects: z.array(
      z.object({ node_name: z.string().nullish(), node_ip: z.string(), best_gbps: z.number() }),
    ),
  }),
});

/** The suspects a result line names, as ledger findings; none when it names none. */
export function linkFindings(line: string, handle: ClusterHandle): NodeFinding[] {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return [];
  }
  const parsed = LinksSchema.safeParse(raw);
  if (!parsed.success) return [];
  const { suspects, median_gbps } = parsed.data.links;
  return suspects.map((s) => ({
    node: s.node_name || s.node_ip,
    reason:
      s.best_gbps > 0
        ? `best link ${s.best_gbps} GB/s, the median node's ${median_gbps} GB/s`
        : 'did not answer the link test',
    workflowId: handle.owner.workflowId,
    cluster: handle.name,
  }));
}

/**
 * Record the link test's suspects in the backend's node ledger, so the resubmitted cluster (and
 * every other run of the namespace) avoids them; the sentence to add to the failure, or undefined.
 */
export async function recordLinkSuspects(
  backend: ComputeBackend,
  line: string | undefined,
  handle: ClusterHandle,
  ttlHours: number,
): Promise<string | undefined> {
  const findings = line ? linkFindings(line, handle) : [];
  if (!findings.length) return undefined;
  const store = backend.nodeLedger();
  const ledger = await store.update((l) => recordFindings(l, findings, new Date(), ttlHours));
  const until = ledger.suspects.find((s) => s.node === findings[0]!.node)?.expires;
  return `${findings.map((f) => f.node).join(', ')} recorded as link suspects in ${store.where} until ${until}: new clusters avoid them (\`ragen-orchestrator nodes\` lists them, \`nodes clear\` removes them)`;
}
