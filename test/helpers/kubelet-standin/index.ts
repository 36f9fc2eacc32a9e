import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  type KubeConfig,
  KubernetesObjectApi,
  type V1Pod,
  type V1Service,
  Watch,
} from '@kubernetes/client-node';
import { KUBE_ENV } from './environment.js';
import { PodNetworks, hostsFile } from './pod-network.js';
import { type Forward, startApiServerProxy } from './service-proxy.js';
import { PodRunner } from './pod-runner.js';
import { podRequests, quantity } from './pod-spec.js';
import { podStatus } from './pod-status.js';
import { matchesNodeAffinity, summarize, violatesAntiAffinity } from './scheduling.js';

/**
 * STAND-IN for the Kubernetes scheduler, the kubelet (with its container runtime and CNI plugin)
 * and the garbage collector of kube-controller-manager, for the test environment only: no
 * container runtime, no images and no GPUs exist here. Everything else is real: etcd,
 * kube-apiserver and the KubeRay operator v1.5.0 make and read the objects this stand-in serves.
 *
 * What it does, all through the real API:
 * - scheduler: binds each unscheduled Pod (schedulerName default-scheduler) to the one stand-in
 *   node through `pods/binding` when its nodeSelector matches the node's labels and its requests
 *   (cpu, memory, nvidia.com/gpu, ...) fit the node's allocatable minus the Pods already bound;
 *   otherwise it sets PodScheduled=False/Unschedulable and tries again when a Pod goes away.
 * - kubelet: per Pod a network namespace on a bridge with an address of its own (pod-network.ts),
 *   an /etc/hosts with localhost, the Pod's hostname and the Services' cluster DNS names; the init
 *   containers in order, then the containers' own command and args (KubeRay's `ray start ...`
 *   line, unchanged) as local processes inside the Pod's namespace with the Pod's environment
 *   (env, envFrom, fieldRef, resourceFieldRef, secretKeyRef, configMapKeyRef, `$(VAR)`), its
 *   workingDir, a private /tmp, and its volumes bind-mounted at their mountPaths: emptyDir (tmpfs
 *   for medium Memory, sized by sizeLimit: KubeRay's /dev/shm), persistentVolumeClaim (the hostPath
 *   of its bound PersistentVolume), hostPath, secret, configMap. Each container runs in a cgroup
 *   of its own; readiness and liveness come from the container's own probes (exec probes run
 *   inside its namespaces, as `kubectl exec` would); restarts follow restartPolicy with the
 *   kubelet's back-off. Pod status (phase, podIP, conditions PodScheduled, Initialized,
 *   ContainersReady, Ready, container and init container states, restart counts) is written
 *   through `pods/status`. A Pod with a deletionTimestamp gets SIGTERM, its grace period, then
 *   every process in its cgroups killed; its namespace and directories are removed and the Pod
 *   object deleted with grace period 0, as a kubelet finishes a deletion.
 * - garbage collector: a Pod or Service whose every ownerReference points at an object that no
 *   longer exists (a deleted RayCluster) is deleted, as kube-controller-manager's GC does.
 *
 * Substituted, the full list (also in docs/testing.md):
 * 1. Images: nothing is pulled; the host's files play the image's. The venv's bin directory is
 *    first on every container's PATH, so the image's `ray` and `python` are the venv's (same Ray).
 * 2. Root filesystem: shared with the host, except a private /tmp per container and the Pod's
 *    volume mounts; a missing workingDir or mountPath is created on the host (Docker creates a
 *    missing workingDir too).
 * 3. Cluster DNS: Service names resolve through the Pod's /etc/hosts to the backing Pods' IPs
 *    (headless or not: there is no kube-proxy, so a ClusterIP is never used); other names fail at once.
 *    The one exception is the `kubernetes` Service: its ClusterIP is on the bridge, forwarded to
 *    the API server (service-proxy.ts), and a Pod that names a ServiceAccount gets its token,
 *    the CA and namespace mounted as the kubelet projects them, and KUBERNETES_SERVICE_HOST/PORT.
 * 4. Resources: requests are checked by the stand-in scheduler, but no cgroup limit is set; GPUs
 *    exist only as the node's allocatable count (Ray's GPUs come from `--num-gpus`).
 * 5. Not done: image pull errors, kubectl logs/exec (logs are files under the Pod's directory),
 *    service-link environment variables, projected volumes, ephemeral containers.
 * 6. Several nodes (`extraNodes`): one process plays the kubelet of each; they share the host and
 *    its bridge, so what tells them apart is the scheduler's view (allocatable, labels, required
 *    node affinity and pod anti-affinity on kubernetes.io/hostname) and each Pod's own veth, which
 *    `slowNodes` rate-limits (tc tbf, both directions) for every Pod on a node: a degraded NIC.
 */
const run = promisify(execFile);
const CGROUP_ROOT = KUBE_ENV.cgroupRoot;

export interface KubeletStandInOptions {
  kc: KubeConfig;
  nodeName: string;
  /** More Node objects this stand-in is the kubelet of (they must exist, like nodeName's). */
  extraNodes?: string[];
  /** The venv's bin directory (its `ray` and `python` play the image's). */
  venvBin: string;
  /** Per-Pod directories; not under /tmp (each container gets a private /tmp). */
  rootDir?: string;
  /**
   * A hosts file for a process outside the Pods (the operator, run out of cluster): every
   * Service's cluster DNS names to its backing Pods, kept current as the Pods' own files are.
   */
  hostHostsFile?: string;
}

/** A test's hold on a Pod's containers (what a long image pull looks like): they start when it resolves. */
export type PodHold = (pod: V1Pod) => Promise<void>;

type Handler<T> = (type: string, obj: T) => void;

/** KUBELET_STANDIN_DEBUG=1 prints what the stand-in does. */
const debug = (message: string) => {
  if (process.env['KUBELET_STANDIN_DEBUG'])
    console.error(`stand-in kubelet: ${new Date().toISOString()} ${message}`);
};

const key = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace}/${o.metadata?.name}`;

export class KubeletStandIn {
  /** Problems the stand-in met (tests assert it stays empty). */
  readonly errors: string[] = [];
  /** The Pods it started, in order. */
  readonly started: V1Pod[] = [];
  /** When each Pod (by name) first became Ready, ms since epoch. */
  readonly readyAt = new Map<string, number>();
  /** Set by a test: containers of the Pods it matches wait for it (ContainerCreating meanwhile). */
  hold: PodHold | undefined;
  /** Set by a test: the Pods it matches run as from an image without these executables (e.g. wget). */
  withoutExecutables: ((pod: V1Pod) => string[]) | undefined;
  private readonly pods = new Map<string, V1Pod>();
  private readonly services = new Map<string, V1Service>();
  private readonly runners = new Map<string, PodRunner>();
  private readonly networks = new PodNetworks();
  private readonly hosts = new Map<string, string>();
  private readonly writes = new Map<string, { dirty: boolean; busy: boolean }>();
  private readonly binding = new Set<string>();
  private readonly unschedulable = new Map<string, string>();
  private readonly core: CoreV1Api;
  private readonly objects: KubernetesObjectApi;
  private readonly rootDir: string;
  private readonly aborts = new Set<AbortController>();
  private readonly loops: Promise<void>[] = [];
  private stopped = false;
  private apiProxy: Forward | undefined;
  /** Set by a test: every Pod on these nodes gets a rate-limited veth (tc tbf rate, e.g. '80mbit'). */
  slowNodes = new Map<string, string>();
  private readonly nodeNames: string[];
  private schedulerQueue: Promise<void> = Promise.resolve();

  constructor(private readonly o: KubeletStandInOptions) {
    this.core = o.kc.makeApiClient(CoreV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(o.kc);
    this.rootDir = o.rootDir ?? KUBE_ENV.podsRoot;
    this.nodeNames = [o.nodeName, ...(o.extraNodes ?? [])];
  }

  private fail(message: string): void {
    this.errors.push(message);
    console.error(`stand-in kubelet: ${message}`);
  }

  async start(): Promise<void> {
    await this.removeStale();
    await this.networks.setUp();
    this.apiProxy = await startApiServerProxy(this.o.kc.getCurrentCluster()?.server ?? '');
    await mkdir(this.rootDir, { recursive: true });
    this.loops.push(
      this.listWatch(
        '/api/v1/pods',
        async () => this.core.listPodForAllNamespaces(),
        this.pods,
        (type, pod: V1Pod) => this.onPod(type, pod),
      ),
      this.listWatch(
        '/api/v1/services',
        async () => this.core.listServiceForAllNamespaces(),
        this.services,
        () => void this.refreshHosts(),
      ),
      this.collectGarbage(),
    );
  }

  /** What a crashed run left: cgroups with processes, tmpfs mounts, directories, namespaces. */
  private async removeStale(): Promise<void> {
    for (const pod of await readdir(CGROUP_ROOT).catch(() => [] as string[])) {
      for (const c of await readdir(join(CGROUP_ROOT, pod), { withFileTypes: true }).catch(() => [])) {
        if (!c.isDirectory()) continue;
        await writeFile(join(CGROUP_ROOT, pod, c.name, 'cgroup.kill'), '1').catch(() => undefined);
        await sleep(100);
        await rmdir(join(CGROUP_ROOT, pod, c.name)).catch(() => undefined);
      }
      await rmdir(join(CGROUP_ROOT, pod)).catch(() => undefined);
    }
    const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').map((l) => l.split(' ')[1] ?? '');
    for (const m of mounts.filter((m) => m.startsWith(`${this.rootDir}/`)).reverse())
      await run('umount', ['-l', m]).catch(() => undefined);
    await rm(this.rootDir, { recursive: true, force: true });
  }

  /** List, then watch from the list's resourceVersion; after any break (API server restart) list again. */
  private async listWatch<
    T extends { metadata?: { namespace?: string; name?: string; resourceVersion?: string } },
  >(
    path: string,
    list: () => Promise<{ metadata?: { resourceVersion?: string }; items: T[] }>,
    cache: Map<string, T>,
    handle: Handler<T>,
  ): Promise<void> {
    while (!this.stopped) {
      try {
        const l = await list();
        const seen = new Set(l.items.map(key));
        const apply = (type: string, obj: T) => {
          if (type === 'DELETED') cache.delete(key(obj));
          else cache.set(key(obj), obj);
          handle(type, obj);
        };
        for (const [k, obj] of cache) if (!seen.has(k)) apply('DELETED', obj);
        for (const item of l.items) apply('MODIFIED', item);
        await new Promise<void>((resolve) => {
          let abort: AbortController | undefined;
          void new Watch(this.o.kc)
            .watch(
              path,
              { resourceVersion: l.metadata?.resourceVersion, allowWatchBookmarks: true },
              (type: string, obj: T) => {
                if (type === 'ERROR') abort?.abort();
                else if (type !== 'BOOKMARK') apply(type, obj);
              },
              () => {
                if (abort) this.aborts.delete(abort);
                resolve();
              },
            )
            .then(
              (a) => {
                abort = a;
                this.aborts.add(a);
                if (this.stopped) a.abort();
              },
              () => resolve(),
            );
        });
      } catch {
        // the API server is down or restarting
      }
      if (!this.stopped) await sleep(500);
    }
  }

  /** The processes of a running Pod by name (empty when the stand-in runs no such Pod). */
  async podProcesses(podName: string): Promise<number[]> {
    for (const runner of this.runners.values())
      if (runner.pod.metadata?.name === podName && !runner.stopped) return runner.processes();
    return [];
  }

  /**
   * A node dropping off the network, for real: the bridge's end of the Pod's veth goes down, so
   * nothing reaches the Pod or leaves it (its processes keep running, as on a host whose NIC died).
   */
  async cutLink(podName: string): Promise<void> {
    for (const runner of this.runners.values())
      if (runner.pod.metadata?.name === podName && runner.net) return this.networks.cutLink(runner.net);
    throw new Error(`stand-in kubelet: no running Pod ${podName}`);
  }

  private onPod(type: string, pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    debug(
      `${type} pod ${key(pod)} node=${pod.spec?.nodeName ?? ''} deleting=${pod.metadata?.deletionTimestamp ?? ''} phase=${pod.status?.phase ?? ''}`,
    );
    if (type === 'DELETED') {
      this.pods.delete(key(pod));
      const runner = this.runners.get(uid);
      if (runner && !runner.stopped) void this.finish(runner, pod, 0, false);
      this.unschedulable.delete(uid);
      void this.schedulePending();
      void this.refreshHosts();
      return;
    }
    this.pods.set(key(pod), pod);
    if (!pod.spec?.nodeName) {
      if (!pod.metadata?.deletionTimestamp) void this.schedule(pod);
      else void this.deleteNow(pod);
      return;
    }
    if (!this.nodeNames.includes(pod.spec.nodeName)) return;
    const runner = this.runners.get(uid);
    if (pod.metadata?.deletionTimestamp) {
      if (runner && !runner.stopped)
        void this.finish(
          runner,
          pod,
          pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30,
          true,
        );
      else if (!runner) void this.deleteNow(pod);
      return;
    }
    if (runner) {
      runner.pod = { ...pod, status: runner.pod.status };
      return;
    }
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    this.startPod(pod);
  }

  private startPod(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const ns = pod.metadata?.namespace ?? 'default';
    const runner = new PodRunner(pod, {
      networks: this.networks,
      rootDir: this.rootDir,
      venvBin: this.o.venvBin,
      envSources: {
        secret: (name) => this.secretData(ns, name),
        configMap: (name) => this.configMapData(ns, name),
      },
      pvcHostPath: (namespace, claim) => this.pvcHostPath(namespace, claim),
      hold: this.hold,
      linkRate: this.slowNodes.get(pod.spec?.nodeName ?? ''),
      withoutExecutables: this.withoutExecutables,
      serviceAccount: (p) => this.serviceAccountToken(p),
      probeFailed: (container, message) => void this.recordUnhealthy(pod, container, message),
      changed: () => {
        const name = pod.metadata?.name ?? '';
        if (
          !this.readyAt.has(name) &&
          runner.record.phase === 'Running' &&
          runner.record.containers.every((c) => c.ready)
        )
          this.readyAt.set(name, Date.now());
        this.writeStatus(runner);
        void this.refreshHosts();
      },
    });
    this.runners.set(uid, runner);
    this.started.push(pod);
    runner.start();
  }

  /**
   * A failed probe, as the kubelet records it: a Warning Event, reason Unhealthy, on the Pod's
   * container. Best effort, like the kubelet's recorder (a lost event loses nothing else).
   */
  private async recordUnhealthy(pod: V1Pod, container: string, message: string): Promise<void> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const at = new Date();
    await this.core
      .createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${pod.metadata?.name ?? 'pod'}.`, namespace },
          involvedObject: {
            kind: 'Pod',
            apiVersion: 'v1',
            namespace,
            name: pod.metadata?.name,
            uid: pod.metadata?.uid,
            fieldPath: `spec.containers{${container}}`,
          },
          reason: 'Unhealthy',
          type: 'Warning',
          message: message.slice(0, 1024),
          source: { component: 'kubelet', host: pod.spec?.nodeName ?? this.o.nodeName },
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1,
        },
      })
      .catch(() => undefined);
  }

  // ---- scheduler ----

  /**
   * One Pod at a time, as kube-scheduler's loop: Pods placed at once would all see the same free
   * GPUs and the same least loaded node.
   */
  private schedule(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    if ((pod.spec?.schedulerName ?? 'default-scheduler') !== 'default-scheduler' || this.binding.has(uid))
      return Promise.resolve();
    this.binding.add(uid);
    const turn = this.schedulerQueue.then(() => this.scheduleOne(pod));
    this.schedulerQueue = turn.catch(() => undefined);
    return turn;
  }

  private async scheduleOne(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    try {
      // Bound, or deleted, while it waited its turn.
      const current = this.pods.get(key(pod));
      if (!current || current.spec?.nodeName || current.metadata?.uid !== uid) return;
      const reasons: string[] = [];
      let target: string | undefined;
      // The least loaded node that fits, as kube-scheduler's default scoring spreads Pods.
      for (const name of [...this.nodeNames].sort((a, b) => this.podsOn(a) - this.podsOn(b))) {
        const node = await this.core.readNode({ name });
        const reason = this.unfit(
          pod,
          name,
          node.metadata?.labels ?? {},
          (node.status?.allocatable ?? {}) as Record<string, string>,
        );
        if (!reason) {
          target = name;
          break;
        }
        reasons.push(reason);
      }
      if (!target) {
        const reason = `0/${this.nodeNames.length} nodes are available: ${summarize(reasons)}.`;
        if (this.unschedulable.get(uid) !== reason) {
          this.unschedulable.set(uid, reason);
          await this.setUnschedulable(pod, reason);
        }
        return;
      }
      this.unschedulable.delete(uid);
      await this.core.createNamespacedPodBinding({
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? 'default',
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: pod.metadata?.name ?? '' },
          target: { apiVersion: 'v1', kind: 'Node', name: target },
        },
      });
      // Until the watch shows nodeName, count it as bound.
      this.pods.set(key(pod), { ...pod, spec: { ...pod.spec!, nodeName: target } });
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code !== 404 && code !== 409 && !this.stopped) {
        // Again after a pause, behind the Pods that wait now (not holding the queue meanwhile).
        setTimeout(() => void this.schedule(pod), 500);
      }
    } finally {
      this.binding.delete(uid);
    }
  }

  /** Pods bound to a node that still hold its resources. */
  private live(nodeName: string): V1Pod[] {
    return [...this.pods.values()].filter(
      (p) => p.spec?.nodeName === nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
    );
  }

  private podsOn(nodeName: string): number {
    return this.live(nodeName).length;
  }

  /** Why the Pod does not fit the node, as the scheduler words it per node; undefined when it fits. */
  private unfit(
    pod: V1Pod,
    nodeName: string,
    labels: Record<string, string>,
    allocatable: Record<string, string>,
  ): string | undefined {
    for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) {
      if (labels[k] !== v) return "1 node(s) didn't match Pod's node affinity/selector";
    }
    if (!matchesNodeAffinity(pod, labels)) return "1 node(s) didn't match Pod's node affinity/selector";
    if (violatesAntiAffinity(pod, this.live(nodeName)))
      return "1 node(s) didn't match pod anti-affinity rules";
    const used: Record<string, number> = {};
    for (const p of this.live(nodeName))
      for (const [k, v] of Object.entries(podRequests(p))) used[k] = (used[k] ?? 0) + v;
    const short = Object.entries(podRequests(pod)).filter(
      ([k, v]) => v > 0 && v + (used[k] ?? 0) > quantity(allocatable[k] ?? '0') + 1e-9,
    );
    return short.length > 0 ? short.map(([k]) => `1 Insufficient ${k}`).join(', ') : undefined;
  }

  private async setUnschedulable(pod: V1Pod, message: string): Promise<void> {
    await this.retrying(pod, async () => {
      const current = await this.core.readNamespacedPodStatus({
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? 'default',
      });
      current.status = {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message,
            lastTransitionTime: new Date(),
          },
        ],
      };
      await this.core.replaceNamespacedPodStatus({
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? 'default',
        body: current,
      });
    });
  }

  private async schedulePending(): Promise<void> {
    for (const pod of [...this.pods.values()])
      if (!pod.spec?.nodeName && !pod.metadata?.deletionTimestamp) await this.schedule(pod);
  }

  // ---- kubelet ----

  /** Coalesced: at most one write per Pod in flight, the latest record wins. */
  private writeStatus(runner: PodRunner): void {
    const uid = runner.pod.metadata?.uid ?? '';
    const w = this.writes.get(uid) ?? { dirty: false, busy: false };
    this.writes.set(uid, w);
    w.dirty = true;
    if (w.busy) return;
    w.busy = true;
    void (async () => {
      while (w.dirty && !this.stopped) {
        w.dirty = false;
        await sleep(50);
        const name = runner.pod.metadata?.name ?? '';
        const namespace = runner.pod.metadata?.namespace ?? 'default';
        await this.retrying(runner.pod, async () => {
          const current = await this.core.readNamespacedPodStatus({ name, namespace });
          if (current.metadata?.uid !== uid) return;
          current.status = podStatus(runner.record, uid);
          runner.pod.status = current.status;
          await this.core.replaceNamespacedPodStatus({ name, namespace, body: current });
        });
      }
      w.busy = false;
    })();
  }

  /** Conflicts and API server restarts: again for up to a minute; 404 means the Pod is gone. */
  private async retrying(pod: V1Pod, fn: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) return;
        if (
          (code !== undefined && code >= 400 && code < 500 && code !== 409 && code !== 429) ||
          Date.now() > deadline
        ) {
          if (!this.stopped) this.fail(`${key(pod)}: ${(err as Error).message}`);
          return;
        }
        if (this.stopped) return;
        await sleep(300);
      }
    }
  }

  /** Stop the Pod's processes and namespace; when the API asked for the deletion, finish it (grace 0). */
  private async finish(
    runner: PodRunner,
    pod: V1Pod,
    graceSeconds: number,
    deleteObject: boolean,
  ): Promise<void> {
    debug(`terminating ${key(pod)} (grace ${graceSeconds} s)`);
    try {
      await runner.terminate(graceSeconds);
      debug(`terminated ${key(pod)}`);
    } catch (err) {
      this.fail(`${key(pod)}: ${(err as Error).message}`);
    }
    this.runners.delete(pod.metadata?.uid ?? '');
    this.writes.delete(pod.metadata?.uid ?? '');
    if (deleteObject) await this.deleteNow(pod);
    void this.refreshHosts();
    void this.schedulePending();
  }

  private async deleteNow(pod: V1Pod): Promise<void> {
    await this.retrying(pod, async () => {
      await this.core.deleteNamespacedPod({
        name: pod.metadata?.name ?? '',
        namespace: pod.metadata?.namespace ?? 'default',
        gracePeriodSeconds: 0,
        // With a body, kube-apiserver reads the options from it only (query parameters are ignored).
        body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid } },
      });
    });
  }

  /** Each running Pod's hosts file: itself and every Service's names mapped to its backing Pods. */
  private async refreshHosts(): Promise<void> {
    const byUid = new Map([...this.runners.values()].map((r) => [r.pod.metadata?.uid ?? '', r]));
    const services = [...this.services.values()].map((s) => {
      const selector = s.spec?.selector;
      const ns = s.metadata?.namespace ?? 'default';
      const ips: string[] = [];
      if (selector && Object.keys(selector).length > 0) {
        for (const p of this.pods.values()) {
          if (
            p.metadata?.namespace !== ns ||
            !Object.entries(selector).every(([k, v]) => p.metadata?.labels?.[k] === v)
          )
            continue;
          const r = byUid.get(p.metadata?.uid ?? '');
          const ip = r?.record.podIP;
          const ready = r?.record.containers.every((c) => c.ready) ?? false;
          if (ip && !r.stopped && (ready || s.spec?.publishNotReadyAddresses)) ips.push(ip);
        }
      }
      const name = s.metadata?.name ?? '';
      return { ns, name, ips };
    });
    if (this.o.hostHostsFile) {
      const lines = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];
      for (const s of services)
        for (const ip of s.ips)
          lines.push(`${ip}\t${s.name}.${s.ns}.svc.cluster.local ${s.name}.${s.ns}.svc`);
      const content = `${lines.join('\n')}\n`;
      // Written in place (same inode): the file is bind-mounted over the operator's /etc/hosts.
      if (this.hosts.get('') !== content) {
        this.hosts.set('', content);
        await writeFile(this.o.hostHostsFile, content).catch(() => undefined);
      }
    }
    for (const r of this.runners.values()) {
      if (!r.net || r.stopped) continue;
      const ns = r.pod.metadata?.namespace;
      const entries = services
        .filter((s) => s.ips.length > 0)
        .map((s) => ({
          ips: s.ips,
          names: [
            `${s.name}.${s.ns}.svc.cluster.local`,
            `${s.name}.${s.ns}.svc`,
            `${s.name}.${s.ns}`,
            ...(s.ns === ns ? [s.name] : []),
          ],
        }));
      const content = hostsFile({ podIP: r.net.podIP, hostname: r.hostname }, entries);
      if (this.hosts.get(r.net.netns) === content) continue;
      this.hosts.set(r.net.netns, content);
      await this.networks.writeHosts(r.net.netns, content).catch(() => undefined);
    }
  }

  private async secretData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const s = await this.core.readNamespacedSecret({ name, namespace });
      return Object.fromEntries([
        ...Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
        ...Object.entries(s.stringData ?? {}),
      ]);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  private async configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      return (await this.core.readNamespacedConfigMap({ name, namespace })).data ?? {};
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  private async pvcHostPath(namespace: string, claim: string): Promise<string> {
    const pvc = await this.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace });
    if (!pvc.spec?.volumeName)
      throw new Error(`PersistentVolumeClaim ${namespace}/${claim} is not bound to a PersistentVolume`);
    const pv = await this.core.readPersistentVolume({ name: pvc.spec.volumeName });
    if (!pv.spec?.hostPath?.path)
      throw new Error(
        `PersistentVolume ${pv.metadata?.name}: the stand-in kubelet mounts only hostPath volumes`,
      );
    return pv.spec.hostPath.path;
  }

  // ---- garbage collector ----

  /** Every 2 s: Pods and Services whose owners are all gone are deleted (background propagation). */
  private async collectGarbage(): Promise<void> {
    while (!this.stopped) {
      await sleep(2000);
      const exists = new Map<string, boolean>();
      const owned = [
        ...[...this.pods.values()].map((o) => ({ o, kind: 'Pod' })),
        ...[...this.services.values()].map((o) => ({ o, kind: 'Service' })),
      ];
      for (const { o, kind } of owned) {
        const refs = o.metadata?.ownerReferences ?? [];
        if (refs.length === 0 || o.metadata?.deletionTimestamp || this.stopped) continue;
        let alive = false;
        for (const ref of refs) {
          const k = `${ref.apiVersion}/${ref.kind}/${o.metadata?.namespace}/${ref.name}/${ref.uid}`;
          if (!exists.has(k))
            exists.set(
              k,
              await this.ownerExists(
                ref.apiVersion,
                ref.kind,
                o.metadata?.namespace ?? 'default',
                ref.name,
                ref.uid,
              ),
            );
          alive ||= exists.get(k) ?? true;
        }
        if (alive) continue;
        const target = {
          name: o.metadata?.name ?? '',
          namespace: o.metadata?.namespace ?? 'default',
          propagationPolicy: 'Background',
        };
        debug(`gc: deleting ${kind} ${key(o)}: its owners are gone`);
        await (
          kind === 'Pod' ? this.core.deleteNamespacedPod(target) : this.core.deleteNamespacedService(target)
        ).catch(() => undefined);
      }
    }
  }

  /** True unless the API says the owner is gone (404, or a new object with another uid). */
  private async ownerExists(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    uid: string,
  ): Promise<boolean> {
    try {
      const owner = await this.objects.read({ apiVersion, kind, metadata: { name, namespace } });
      return owner.metadata?.uid === uid;
    } catch (err) {
      debug(
        `gc: read ${kind} ${namespace}/${name}: ${(err as { code?: number }).code} ${(err as Error).message.slice(0, 200)}`,
      );
      return (err as { code?: number }).code !== 404;
    }
  }

  /** Stop watching; every Pod still running is stopped (2 s grace) and its namespace removed. */
  /** What the kubelet asks for a Pod's projected token: TokenRequest bound to the Pod, and the CA. */
  private async serviceAccountToken(pod: V1Pod): Promise<{ token: string; ca: string }> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.spec?.serviceAccountName ?? 'default';
    const request = await this.core.createNamespacedServiceAccountToken({
      name,
      namespace,
      body: {
        spec: {
          audiences: [],
          expirationSeconds: 3600,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid: pod.metadata?.uid },
        },
      },
    });
    const caFile = this.o.kc.getCurrentCluster()?.caFile;
    if (!request.status?.token || !caFile)
      throw new Error(`no token for service account ${namespace}/${name}`);
    return { token: request.status.token, ca: await readFile(caFile, 'utf8') };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.apiProxy?.close();
    for (const a of this.aborts) a.abort();
    await Promise.all(
      [...this.runners.values()].map((r) => r.terminate(2).catch((err: Error) => this.fail(err.message))),
    );
    this.runners.clear();
    await Promise.all(this.loops);
    await this.networks.tearDown();
    if (!process.env['KEEP_KUBE_ENV']) await this.removeStale();
  }
}
