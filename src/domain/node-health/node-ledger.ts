import { z } from 'zod';

/**
 * The namespace's ledger of suspect nodes: machines the all-reduce probe's link test found slow or
 * unresponsive. Every cluster a backend creates avoids the live entries; an entry lives until its
 * expiry (a bad NIC is usually fixed or drained within a day) or until `ragen-orchestrator nodes
 * clear` removes it. Pure: the stores are in the backends (local: a file; kuberay: a ConfigMap).
 */
export const NodeSuspectSchema = z.strictObject({
  /** The machine as the platform names it: the Kubernetes Node, or a local slot (`local-slot-2`). */
  node: z.string().min(1),
  /** The probe's words: its best link against the median node's, or that it did not answer. */
  reason: z.string(),
  /** First recorded; a later finding keeps it and moves the expiry. */
  since: z.string(),
  expires: z.string(),
  /** How often it was found: a node named by several runs is likely broken, not unlucky. */
  findings: z.number().int().min(1),
  /** The run that found it last. */
  workflowId: z.string(),
  cluster: z.string(),
});
export type NodeSuspect = z.infer<typeof NodeSuspectSchema>;

export const NodeLedgerSchema = z.strictObject({ suspects: z.array(NodeSuspectSchema) });
export type NodeLedger = z.infer<typeof NodeLedgerSchema>;

export const EMPTY_LEDGER: NodeLedger = { suspects: [] };

/** A finding to record: the node and why, from one run's link test. */
export interface NodeFinding {
  node: string;
  reason: string;
  workflowId: string;
  cluster: string;
}

/** Entries not yet expired at `now`, in the ledger's order. */
export function liveSuspects(ledger: NodeLedger, now: Date): NodeSuspect[] {
  return ledger.suspects.filter((s) => Date.parse(s.expires) > now.getTime());
}

/** The ledger with `findings` recorded for `ttlHours` from `now`; expired entries are dropped. */
export function recordFindings(
  ledger: NodeLedger,
  findings: readonly NodeFinding[],
  now: Date,
  ttlHours: number,
): NodeLedger {
  const expires = new Date(now.getTime() + ttlHours * 3600_000).toISOString();
  const suspects = liveSuspects(ledger, now).map((s) => ({ ...s }));
  for (const f of findings) {
    const known = suspects.find((s) => s.node === f.node);
    if (known) Object.assign(known, { ...f, since: known.since, expires, findings: known.findings + 1 });
    else suspects.push({ ...f, since: now.toISOString(), expires, findings: 1 });
  }
  return { suspects };
}

/** The ledger without the named nodes (all of them when `nodes` is empty) and without expired ones. */
export function clearSuspects(
  ledger: NodeLedger,
  nodes: readonly string[],
  now: Date,
): { ledger: NodeLedger; cleared: string[] } {
  const live = liveSuspects(ledger, now);
  const drop = (s: NodeSuspect) => nodes.length === 0 || nodes.includes(s.node);
  return {
    ledger: { suspects: live.filter((s) => !drop(s)) },
    cleared: live.filter(drop).map((s) => s.node),
  };
}

/** Parse a stored ledger; a missing one is empty, a malformed one an error naming where it is. */
export function parseLedger(text: string | undefined, where: string): NodeLedger {
  if (text === undefined || text.trim() === '') return EMPTY_LEDGER;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`the node ledger ${where} is not JSON (${(err as Error).message}): fix or delete it`);
  }
  const parsed = NodeLedgerSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `the node ledger ${where} is malformed (${parsed.error.issues[0]?.message}): fix or delete it`,
    );
  return parsed.data;
}

/** The store a backend keeps the ledger in; `update` is atomic against other writers of the namespace. */
export interface NodeLedgerStore {
  /** Where it lives, for messages (a path, a ConfigMap). */
  readonly where: string;
  read(): Promise<NodeLedger>;
  update(change: (ledger: NodeLedger) => NodeLedger): Promise<NodeLedger>;
}
