import { transient } from '../../../errors/domain-error.js';
import { TransientErrorTypes } from '../../../domain/failures/error-types.js';
import type { KubeAction } from '../kube-errors.js';
import { RAYCLUSTER, type RayClusterObject } from '../raycluster.js';
import { type BackendLogger, quietLogger } from '../../logger.js';
import { type KubeTransport, type WatchEvent, answered } from './transport.js';

/** What a RayCluster request does, for kubeFailure's messages. */
function action(namespace: string, verb: string, name?: string): KubeAction {
  return { verb, resource: `${RAYCLUSTER.plural}.${RAYCLUSTER.group}`, namespace, name };
}

/** ray.io/v1 RayClusters of the namespace: the lifecycle, the reaper's list, one watch per cluster, the CRD. */
export class RayClustersClient {
  constructor(
    private readonly transport: KubeTransport,
    private readonly logger: BackendLogger = quietLogger,
  ) {}

  private get params() {
    return {
      group: RAYCLUSTER.group,
      version: RAYCLUSTER.version,
      namespace: this.transport.namespace,
      plural: RAYCLUSTER.plural,
    };
  }

  /** Create; `created: false` with the existing object on 409 AlreadyExists. */
  async create(body: RayClusterObject): Promise<{ created: boolean; object: RayClusterObject }> {
    try {
      const object = (await this.transport.call(
        action(this.transport.namespace, 'create', body.metadata.name),
        ({ custom }) => custom.createNamespacedCustomObject({ ...this.params, body }),
        [409],
      )) as RayClusterObject;
      return { created: true, object };
    } catch (err) {
      if (!answered(err, 409)) throw err;
      this.logger.info('RayCluster create answered 409 AlreadyExists; reading it back', {
        cluster: body.metadata.name,
      });
      const existing = await this.get(body.metadata.name);
      if (!existing)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `RayCluster ${body.metadata.name} answered 409 AlreadyExists but is gone on read-back (being deleted?); retrying`,
        );
      return { created: false, object: existing };
    }
  }

  /** undefined on 404. */
  async get(name: string): Promise<RayClusterObject | undefined> {
    return (await this.transport.found(action(this.transport.namespace, 'get', name), ({ custom }) =>
      custom.getNamespacedCustomObject({ ...this.params, name }),
    )) as RayClusterObject | undefined;
  }

  /** Background propagation (pods go by garbage collection); `found: false` on 404. */
  async delete(name: string): Promise<{ found: boolean }> {
    try {
      await this.transport.call(
        action(this.transport.namespace, 'delete', name),
        ({ custom }) =>
          custom.deleteNamespacedCustomObject({ ...this.params, name, propagationPolicy: 'Background' }),
        [404],
      );
      return { found: true };
    } catch (err) {
      if (answered(err, 404)) return { found: false };
      throw err;
    }
  }

  async list(labelSelector: string): Promise<RayClusterObject[]> {
    const list = (await this.transport.call(action(this.transport.namespace, 'list'), ({ custom }) =>
      custom.listNamespacedCustomObject({ ...this.params, labelSelector }),
    )) as { items: RayClusterObject[] };
    return list.items;
  }

  /** Watch one RayCluster from a resourceVersion; see KubeTransport.watch. */
  async watch(
    name: string,
    resourceVersion: string | undefined,
    onEvent: (e: WatchEvent<RayClusterObject>) => void,
    onDone: (err: unknown) => void,
  ): Promise<AbortController> {
    const { group, version, namespace, plural } = this.params;
    return this.transport.watch(
      `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
      {
        fieldSelector: `metadata.name=${name}`,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
      },
      (e) => onEvent(e as WatchEvent<RayClusterObject>),
      onDone,
    );
  }

  /** Whether ray.io/v1 rayclusters is served: the CRD when readable, else API discovery (open to every user). */
  async crd(): Promise<{ installed: boolean; detail: string }> {
    try {
      const crd = await this.transport.call(
        { verb: 'get', resource: 'customresourcedefinitions', name: 'rayclusters.ray.io' },
        ({ apiext }) => apiext.readCustomResourceDefinition({ name: 'rayclusters.ray.io' }),
        [403, 404],
      );
      const v1 = crd.spec.versions.find((v) => v.name === 'v1');
      return v1?.served
        ? { installed: true, detail: 'CRD rayclusters.ray.io serves v1' }
        : {
            installed: false,
            detail:
              'CRD rayclusters.ray.io exists but does not serve v1: upgrade the KubeRay CRDs (v1.0 or later)',
          };
    } catch (err) {
      if (!answered(err, 403, 404)) throw err;
      if (err.status === 404)
        return {
          installed: false,
          detail:
            'CRD rayclusters.ray.io is not installed: install KubeRay (helm install kuberay-operator kuberay/kuberay-operator, or kubectl create -k ray-operator/config/crd)',
        };
    }
    const groups = await this.transport.call({ verb: 'get', resource: 'API discovery (/apis)' }, ({ apis }) =>
      apis.getAPIVersions(),
    );
    const ray = groups.groups.find((g) => g.name === RAYCLUSTER.group);
    return ray?.versions.some((v) => v.version === RAYCLUSTER.version)
      ? {
          installed: true,
          detail: 'API group ray.io/v1 is served (CRD itself not readable by this identity)',
        }
      : { installed: false, detail: 'API group ray.io/v1 is not served: install the KubeRay CRDs' };
  }
}
