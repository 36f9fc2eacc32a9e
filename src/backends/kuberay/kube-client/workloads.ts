import { WORKLOAD, type WorkloadObject } from '../kueue-workloads.js';
import { type KubeTransport, answered } from './transport.js';

/** Kueue's Workloads of the namespace (kueue-workloads.ts reads a queued cluster's place from them). */
export class WorkloadsClient {
  constructor(private readonly transport: KubeTransport) {}

  /** undefined when Kueue is not installed (404) or this identity may not list them (403): the place is optional. */
  async list(): Promise<WorkloadObject[] | undefined> {
    const { namespace } = this.transport;
    const action = { verb: 'list', resource: `${WORKLOAD.plural}.${WORKLOAD.group}`, namespace };
    try {
      const list = (await this.transport.call(
        action,
        ({ custom }) => custom.listNamespacedCustomObject({ ...WORKLOAD, namespace }),
        [403, 404],
      )) as { items: WorkloadObject[] };
      return list.items;
    } catch (err) {
      if (answered(err, 403, 404)) return undefined;
      throw err;
    }
  }
}
