import type { KubeAction } from '../kube-errors.js';
import type { KubeTransport } from './transport.js';

/** The ConfigMap fields the product reads and writes. */
export interface ConfigMapObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** What a ConfigMap request does, for kubeFailure's messages. */
function action(namespace: string, verb: string, name?: string): KubeAction {
  return { verb, resource: 'configmaps', namespace, name };
}

/** The namespace's ConfigMaps: the node ledger (node-ledger-configmap.ts). */
export class ConfigMapsClient {
  constructor(private readonly transport: KubeTransport) {}

  get namespace(): string {
    return this.transport.namespace;
  }

  /** undefined on 404. */
  async get(name: string): Promise<ConfigMapObject | undefined> {
    return (await this.transport.found(action(this.namespace, 'get', name), ({ core }) =>
      core.readNamespacedConfigMap({ name, namespace: this.namespace }),
    )) as ConfigMapObject | undefined;
  }

  /** Create, or PUT with the read resourceVersion: 409 (a concurrent writer) comes back as KubeStatusError. */
  async write(body: ConfigMapObject): Promise<void> {
    const { name } = body.metadata;
    if (body.metadata.resourceVersion)
      await this.transport.call(
        action(this.namespace, 'update', name),
        ({ core }) => core.replaceNamespacedConfigMap({ name, namespace: this.namespace, body }),
        [409],
      );
    else
      await this.transport.call(
        action(this.namespace, 'create', name),
        ({ core }) => core.createNamespacedConfigMap({ namespace: this.namespace, body }),
        [409],
      );
  }
}
