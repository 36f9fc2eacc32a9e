import { transient } from '../../../errors/domain-error.js';
import { TransientErrorTypes } from '../../../domain/failures/error-types.js';
import type { KubeAction } from '../kube-errors.js';
import type { SecretObject } from '../auth-secret.js';
import { type KubeTransport, answered } from './transport.js';

/** A Secret's name and owner marks, without its data. */
export interface SecretMarks {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
}

/** What a Secret request does, for kubeFailure's messages. */
function action(namespace: string, verb: string, name?: string): KubeAction {
  return { verb, resource: 'secrets', namespace, name };
}

/** The namespace's Secrets: the per-cluster Ray auth tokens (auth-secret.ts). */
export class SecretsClient {
  constructor(private readonly transport: KubeTransport) {}

  /** Create; on 409 AlreadyExists the existing Secret (a retried create keeps the first token). */
  async create(body: SecretObject): Promise<{ created: boolean; secret: SecretObject }> {
    const { name } = body.metadata;
    try {
      const secret = await this.transport.call(
        action(this.transport.namespace, 'create', name),
        ({ core }) => core.createNamespacedSecret({ namespace: this.transport.namespace, body }),
        [409],
      );
      return { created: true, secret: secret as SecretObject };
    } catch (err) {
      if (!answered(err, 409)) throw err;
      const existing = await this.get(name);
      if (!existing)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `Secret ${name} answered 409 AlreadyExists but is gone on read-back; retrying`,
        );
      return { created: false, secret: existing };
    }
  }

  /**
   * The product's Secrets by label (the reaper's search for tokens whose RayCluster never came):
   * their marks only; the tokens are dropped here, never kept.
   */
  async listMarks(labelSelector: string): Promise<SecretMarks[]> {
    const list = await this.transport.call(action(this.transport.namespace, 'list'), ({ core }) =>
      core.listNamespacedSecret({ namespace: this.transport.namespace, labelSelector }),
    );
    return list.items.map(({ metadata: m }) => ({
      name: m?.name ?? '',
      labels: m?.labels,
      annotations: m?.annotations,
      creationTimestamp: m?.creationTimestamp ? new Date(m.creationTimestamp).toISOString() : undefined,
    }));
  }

  /** undefined on 404. */
  async get(name: string): Promise<SecretObject | undefined> {
    return (await this.transport.found(action(this.transport.namespace, 'get', name), ({ core }) =>
      core.readNamespacedSecret({ name, namespace: this.transport.namespace }),
    )) as SecretObject | undefined;
  }

  /** PUT with the read resourceVersion (a concurrent change answers 409 and the caller retries). */
  async replace(body: SecretObject): Promise<void> {
    const { name } = body.metadata;
    await this.transport.call(action(this.transport.namespace, 'update', name), ({ core }) =>
      core.replaceNamespacedSecret({ name, namespace: this.transport.namespace, body }),
    );
  }

  /** `found: false` on 404. */
  async delete(name: string): Promise<{ found: boolean }> {
    try {
      await this.transport.call(
        action(this.transport.namespace, 'delete', name),
        ({ core }) => core.deleteNamespacedSecret({ name, namespace: this.transport.namespace }),
        [404],
      );
      return { found: true };
    } catch (err) {
      if (answered(err, 404)) return { found: false };
      throw err;
    }
  }
}
