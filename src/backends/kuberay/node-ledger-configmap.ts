import {
  type NodeLedger,
  type NodeLedgerStore,
  liveSuspects,
  parseLedger,
} from '../../domain/node-health/node-ledger.js';
import type { KubeClients } from './kube-client/clients.js';
import { KubeStatusError } from './kube-errors.js';
import { LABELS, MANAGED_BY } from './labels.js';
import { syncSuspectLabels } from './node-labels.js';

export const NODE_LEDGER_CONFIGMAP = 'ragen-orchestrator-node-suspects';
const KEY = 'suspects.json';

/** Where the ledger of a namespace lives, for messages (also before the client is loaded). */
export function configMapLedgerWhere(namespace: string): string {
  return `ConfigMap ${namespace}/${NODE_LEDGER_CONFIGMAP}`;
}

/**
 * The kuberay backend's node ledger: one ConfigMap of the namespace, so every worker and every run
 * of the namespace shares it and a platform can read it (`kubectl get configmap`). Updates are
 * read-modify-write with the resourceVersion; a concurrent writer's 409 is retried on fresh data.
 * With `labelNodes`, each write also labels the live suspects' Nodes for the platform (node-labels.ts).
 */
export class NodeLedgerConfigMap implements NodeLedgerStore {
  readonly where: string;

  constructor(
    private readonly kube: Pick<KubeClients, 'configMaps' | 'nodes'>,
    private readonly labelNodes = false,
  ) {
    this.where = configMapLedgerWhere(kube.configMaps.namespace);
  }

  async read(): Promise<NodeLedger> {
    return parseLedger((await this.kube.configMaps.get(NODE_LEDGER_CONFIGMAP))?.data?.[KEY], this.where);
  }

  async update(change: (ledger: NodeLedger) => NodeLedger): Promise<NodeLedger> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.kube.configMaps.get(NODE_LEDGER_CONFIGMAP);
      const next = change(parseLedger(found?.data?.[KEY], this.where));
      try {
        await this.kube.configMaps.write({
          metadata: {
            name: NODE_LEDGER_CONFIGMAP,
            labels: { [LABELS.managedBy]: MANAGED_BY },
            ...(found?.metadata.resourceVersion ? { resourceVersion: found.metadata.resourceVersion } : {}),
          },
          data: { [KEY]: `${JSON.stringify(next, null, 2)}\n` },
        });
        if (this.labelNodes) await syncSuspectLabels(this.kube.nodes, liveSuspects(next, new Date()));
        return next;
      } catch (err) {
        if (!(err instanceof KubeStatusError && err.status === 409) || attempt >= 5) throw err;
      }
    }
  }
}
