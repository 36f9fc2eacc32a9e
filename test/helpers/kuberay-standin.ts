import { join } from 'node:path';
import { CustomObjectsApi, type KubeConfig, Watch } from '@kubernetes/client-node';
import { ensureDir, type LauncherConfig, startHead, startWorker, stopCluster, waitForAliveNodes } from '../../src/backends/local/launcher.js';
import { freePorts } from '../../src/backends/local/ports.js';
import type { LocalClusterState } from '../../src/backends/local/state.js';
import { readOwner } from '../../src/backends/kuberay/labels.js';
import { RAYCLUSTER, type RayClusterCondition, type RayClusterObject, type RayClusterStatus } from '../../src/backends/kuberay/raycluster.js';
import { shortHash } from '../../src/domain/naming.js';

/**
 * STAND-IN for the KubeRay operator and the kubelets, for the test environment only (no
 * container runtime exists here). It watches RayClusters through the real kube-apiserver, starts
 * a real local Ray cluster of the requested shape with the local backend's launcher (head, then
 * one node per worker replica with the requested GPUs as logical GPUs), and writes status the way
 * KubeRay v1.5 does: head address and endpoints, desired/ready worker counts, the HeadPodReady and
 * RayClusterProvisioned conditions, observedGeneration. Its finalizer holds the object until the
 * Ray processes are gone (what pod termination is in a real cluster); then it releases it.
 */
export const STANDIN_FINALIZER = 'standin.ragen.dev/ray-processes';

interface Running {
  state: LocalClusterState;
  deleted: boolean;
  launch: Promise<void>;
  readyWorkers: number;
  desiredWorkers: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StandInOptions extends LauncherConfig {
  kc: KubeConfig;
  namespace: string;
  runRoot: string;
  /** Workers start only after this resolves (image pull time, in a real cluster). */
  holdWorkers?: () => Promise<void>;
}

export class KubeRayStandIn {
  readonly clusters = new Map<string, Running>();
  /** Every RayCluster name the stand-in ever launched, in order (a re-create would show twice). */
  readonly launched: string[] = [];
  readonly errors: string[] = [];

  private fail(message: string): void {
    this.errors.push(message);
    console.error(`kuberay stand-in: ${message}`);
  }
  private readonly custom: CustomObjectsApi;
  private abort: AbortController | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly o: StandInOptions) {
    this.custom = o.kc.makeApiClient(CustomObjectsApi);
  }

  private get params() {
    return { group: RAYCLUSTER.group, version: RAYCLUSTER.version, namespace: this.o.namespace, plural: RAYCLUSTER.plural };
  }

  start(): void {
    this.loop = this.watchLoop();
  }

  /** List, handle, watch from the list's resourceVersion; after any break (API server restart) list again. */
  private async watchLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        const list = (await this.custom.listNamespacedCustomObject(this.params)) as { metadata: { resourceVersion: string }; items: RayClusterObject[] };
        for (const item of list.items) this.handle('ADDED', item);
        await new Promise<void>((resolve) => {
          void new Watch(this.o.kc)
            .watch(
              `/apis/ray.io/v1/namespaces/${this.o.namespace}/rayclusters`,
              { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
              (type, obj: RayClusterObject) => this.handle(type, obj),
              () => resolve(),
            )
            .then((a) => {
              this.abort = a;
              if (this.stopped) a.abort();
            });
        });
      } catch {
        // the API server is down or restarting
      }
      if (!this.stopped) await sleep(500);
    }
  }

  private handle(type: string, obj: RayClusterObject): void {
    if (type === 'BOOKMARK' || type === 'ERROR') return;
    const name = obj.metadata.name;
    const known = this.clusters.get(name);
    if (type === 'DELETED' || obj.metadata.deletionTimestamp) {
      if (known && !known.deleted) {
        known.deleted = true;
        void this.release(name, known);
      }
      return;
    }
    if (!known) this.launch(obj);
  }

  private launch(obj: RayClusterObject): void {
    const name = obj.metadata.name;
    const owner = readOwner(obj.metadata);
    const spec = obj.spec as {
      headGroupSpec: { template: { spec: { containers: { resources?: { limits?: Record<string, string> } }[] } } };
      workerGroupSpecs?: { groupName: string; replicas?: number; template: { spec: { containers: { resources?: { limits?: Record<string, string> } }[] } } }[];
    };
    const limits = (t: { spec: { containers: { resources?: { limits?: Record<string, string> } }[] } }) => t.spec.containers[0]?.resources?.limits ?? {};
    const groups = (spec.workerGroupSpecs ?? []).map((g) => ({ name: g.groupName, replicas: g.replicas ?? 0, gpus: Number(limits(g.template)['nvidia.com/gpu'] ?? 0), cpus: Number(limits(g.template)['cpu'] ?? 1) }));
    const running: Running = {
      state: {
        name,
        owner: 'owner' in owner ? owner.owner : { experiment: '?', workflowId: '?', runId: '?', attempt: 0 },
        createdAt: new Date().toISOString(),
        nodeIp: this.o.nodeIp,
        gcsPort: 0,
        dashboardUrl: '',
        tempDir: join(this.o.runRoot, shortHash(name)),
        complete: false,
        nodes: [],
      },
      deleted: false,
      launch: Promise.resolve(),
      readyWorkers: 0,
      desiredWorkers: groups.reduce((n, g) => n + g.replicas, 0),
    };
    this.clusters.set(name, running);
    this.launched.push(name);
    running.launch = this.bringUp(running, Number(limits(spec.headGroupSpec.template)['cpu'] ?? 1), groups).catch((err: Error) => {
      this.fail(`${name}: ${err.message}`);
    });
  }

  private async bringUp(r: Running, headCpus: number, groups: { name: string; replicas: number; gpus: number; cpus: number }[]): Promise<void> {
    const name = r.state.name;
    await this.updateObject(name, (o) => {
      o.metadata.finalizers = [...new Set([...(o.metadata.finalizers ?? []), STANDIN_FINALIZER])];
    });
    const dir = join(this.o.runRoot, name);
    await ensureDir(dir);
    await ensureDir(r.state.tempDir);
    const [gcsPort, dashboardPort] = (await freePorts(2)) as [number, number];
    r.state.gcsPort = gcsPort;
    r.state.dashboardUrl = `http://127.0.0.1:${dashboardPort}`;
    await this.writeStatus(r, { headReady: false });
    if (r.deleted) return;
    r.state.nodes.push(await startHead(this.o, r.state, dir, headCpus));
    await this.writeStatus(r, { headReady: true });
    await this.o.holdWorkers?.();
    for (const g of groups) {
      for (let i = 0; i < g.replicas; i++) {
        if (r.deleted) return;
        r.state.nodes.push(await startWorker(this.o, r.state, dir, g.name, i, g.gpus, g.cpus));
        if (await waitForAliveNodes(r.state.dashboardUrl, r.state.nodes.length)) r.readyWorkers++;
        await this.writeStatus(r, { headReady: true });
      }
    }
    r.state.complete = true;
  }

  /** Status as KubeRay writes it (through the status subresource). */
  private async writeStatus(r: Running, { headReady }: { headReady: boolean }): Promise<void> {
    const now = new Date().toISOString();
    const provisioned = headReady && r.readyWorkers === r.desiredWorkers;
    const conditions: RayClusterCondition[] = [
      headReady
        ? { type: 'HeadPodReady', status: 'True', reason: 'HeadPodRunningAndReady', message: '', lastTransitionTime: now }
        : { type: 'HeadPodReady', status: 'False', reason: 'ContainersNotReady', message: 'stand-in: ray head starting', lastTransitionTime: now },
      provisioned
        ? { type: 'RayClusterProvisioned', status: 'True', reason: 'AllPodRunningAndReadyFirstTime', message: 'All Ray Pods are ready for the first time', lastTransitionTime: now }
        : { type: 'RayClusterProvisioned', status: 'False', reason: 'RayClusterPodsProvisioning', message: 'RayCluster Pods are being provisioned for first time', lastTransitionTime: now },
    ];
    const port = new URL(r.state.dashboardUrl).port;
    const status: RayClusterStatus = {
      ...(provisioned ? { state: 'ready' } : {}),
      desiredWorkerReplicas: r.desiredWorkers,
      readyWorkerReplicas: r.readyWorkers,
      availableWorkerReplicas: r.readyWorkers,
      endpoints: { dashboard: port, 'gcs-server': String(r.state.gcsPort) },
      head: { podIP: '127.0.0.1', podName: `${r.state.name}-head`, serviceIP: '127.0.0.1', serviceName: `${r.state.name}-head-svc` },
      conditions,
    };
    await this.retrying(async () => {
      const o = (await this.custom.getNamespacedCustomObject({ ...this.params, name: r.state.name })) as RayClusterObject;
      o.status = { ...status, observedGeneration: o.metadata.generation };
      await this.custom.replaceNamespacedCustomObjectStatus({ ...this.params, name: r.state.name, body: o });
    });
  }

  private async updateObject(name: string, change: (o: RayClusterObject) => void): Promise<void> {
    await this.retrying(async () => {
      const o = (await this.custom.getNamespacedCustomObject({ ...this.params, name })) as RayClusterObject;
      change(o);
      await this.custom.replaceNamespacedCustomObject({ ...this.params, name, body: o });
    });
  }

  /** Conflicts and API server restarts: try again for up to a minute; a 404 means it was deleted. */
  private async retrying(fn: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) return;
        if (code !== undefined && code >= 400 && code < 500 && code !== 409 && code !== 429) throw err;
        if (Date.now() > deadline || this.stopped) throw err;
        await sleep(300);
      }
    }
  }

  /** The object is being deleted: stop Ray (pods terminating), then drop the finalizer. */
  private async release(name: string, r: Running): Promise<void> {
    await r.launch;
    const left = await stopCluster(r.state);
    if (left.length > 0) this.fail(`${name}: Ray processes left after stop: ${left.join(', ')}`);
    await this.updateObject(name, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== STANDIN_FINALIZER);
    }).catch((err: Error) => this.fail(`${name}: finalizer: ${err.message}`));
    this.clusters.delete(name);
  }

  /** Stop watching and stop every Ray cluster still running. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    for (const r of this.clusters.values()) {
      await r.launch;
      await stopCluster(r.state);
    }
    await this.loop;
  }
}
