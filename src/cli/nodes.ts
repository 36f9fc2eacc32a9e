import type { OrchestratorConfig } from '../config/config.js';
import { createBackends } from '../backends/registry.js';
import { alignedTable } from './text-table.js';
import { clearSuspects, liveSuspects, type NodeSuspect } from '../domain/node-health/node-ledger.js';

/** The backend whose ledger a `nodes` command reads; kuberay needs a configured cluster. */
function ledgerOf(config: OrchestratorConfig, backend: 'local' | 'kuberay') {
  const b = createBackends(config)[backend];
  if (!b)
    throw new Error(
      `--backend kuberay: no Kubernetes cluster is configured (set RAGEN_KUBECONFIG or run in a Pod)`,
    );
  return { store: b.nodeLedger(), close: () => b.close?.() };
}

function table(suspects: NodeSuspect[]): string {
  return alignedTable(
    ['NODE', 'EXPIRES', 'FINDINGS', 'REASON', 'LAST FOUND BY'],
    suspects.map((s) => [s.node, s.expires, String(s.findings), s.reason, s.workflowId]),
  );
}

/** `nodes`: the live link suspects every new cluster of the namespace avoids. */
export async function nodesListCommand(
  config: OrchestratorConfig,
  backend: 'local' | 'kuberay',
  json: boolean,
): Promise<number> {
  const { store, close } = ledgerOf(config, backend);
  try {
    const live = liveSuspects(await store.read(), new Date());
    if (json) console.log(JSON.stringify(live, null, 2));
    else if (!live.length) console.log(`no link suspects in ${store.where}`);
    else console.log(`${table(live)}\n(${live.length} in ${store.where}; new clusters avoid them)`);
    return 0;
  } finally {
    close();
  }
}

/** `nodes clear [node...]`: the named suspects (or all) leave the ledger; new clusters may use them again. */
export async function nodesClearCommand(
  config: OrchestratorConfig,
  backend: 'local' | 'kuberay',
  nodes: string[],
  all: boolean,
): Promise<number> {
  if (!nodes.length && !all) {
    console.error('nodes clear: name the nodes to clear, or give --all');
    return 2;
  }
  const { store, close } = ledgerOf(config, backend);
  try {
    let cleared: string[] = [];
    await store.update((ledger) => {
      const r = clearSuspects(ledger, all ? [] : nodes, new Date());
      cleared = r.cleared;
      return r.ledger;
    });
    const unknown = nodes.filter((n) => !cleared.includes(n));
    if (cleared.length) console.log(`cleared from ${store.where}: ${cleared.join(', ')}`);
    else if (all) console.log(`no link suspects in ${store.where}`);
    if (unknown.length) console.error(`not link suspects in ${store.where}: ${unknown.join(', ')}`);
    return unknown.length ? 1 : 0;
  } finally {
    close();
  }
}
