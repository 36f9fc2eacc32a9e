import type { ClusterHandle, ClusterStatus } from '../../domain/cluster/cluster.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import type { ComputeBackend, CreateClusterRequest, OwnedCluster, PreflightCheck } from '../backend.js';
import type { NodeLedgerStore } from '../../domain/node-health/node-ledger.js';
import { configMapLedgerWhere } from './node-ledger-configmap.js';
import type { KubeRayBackend, KubeRayBackendConfig } from './kuberay-backend.js';

/**
 * The kuberay backend, loaded on first use: `@kubernetes/client-node` takes about a second of CPU
 * and 30 MB to import, which a worker that only ever runs local experiments (every `--embedded`
 * run) should not pay at start. Every call goes to one KubeRayBackend made on the first call.
 */
export class LazyKubeRayBackend implements ComputeBackend {
  readonly kind = 'kuberay' as const;
  private backend: Promise<KubeRayBackend> | undefined;
  private loaded: KubeRayBackend | undefined;

  constructor(readonly config: KubeRayBackendConfig) {}

  private get(): Promise<KubeRayBackend> {
    this.backend ??= import('./kuberay-backend.js').then(
      ({ KubeRayBackend }) => (this.loaded = new KubeRayBackend(this.config)),
    );
    return this.backend;
  }

  /** The same mapping as KubeRayBackend's (a leading `python` is the image's interpreter); needs no client. */
  resolveArgv(argv: readonly string[]): string[] {
    return argv.map((a, i) => (i === 0 && a === 'python' ? this.config.python : a));
  }

  async preflight(spec: ExperimentSpec): Promise<PreflightCheck[]> {
    return (await this.get()).preflight(spec);
  }

  async plannedRayVersion(): Promise<string | undefined> {
    return (await this.get()).plannedRayVersion();
  }

  async createCluster(request: CreateClusterRequest): Promise<ClusterHandle> {
    return (await this.get()).createCluster(request);
  }

  async describeCluster(handle: ClusterHandle): Promise<ClusterStatus> {
    return (await this.get()).describeCluster(handle);
  }

  async deleteCluster(handle: ClusterHandle): Promise<{ alreadyGone: boolean }> {
    return (await this.get()).deleteCluster(handle);
  }

  async dashboardToken(handle: ClusterHandle): Promise<string | undefined> {
    return (await this.get()).dashboardToken(handle);
  }

  async dashboardUrlOf(handle: ClusterHandle): Promise<string | undefined> {
    return (await this.get()).dashboardUrlOf(handle);
  }

  async listClusters(): Promise<OwnedCluster[]> {
    return (await this.get()).listClusters();
  }

  /** A store whose calls load the backend first (the ledger is a ConfigMap: it needs the client). */
  nodeLedger(): NodeLedgerStore {
    const store = () => this.get().then((b) => b.nodeLedger());
    return {
      where: configMapLedgerWhere(this.config.namespace),
      read: async () => (await store()).read(),
      update: async (change) => (await store()).update(change),
    };
  }

  close(): void {
    this.loaded?.close();
  }
}
