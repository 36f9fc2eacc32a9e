import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  chmod,
  chown,
  mkdir,
  open,
  readdir,
  readFile,
  realpath,
  rm,
  rmdir,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';
import { KUBE_ENV } from './environment.js';
import { NODE_IP, type PodNetwork, type PodNetworks } from './pod-network.js';
import { KUBERNETES_SERVICE_IP, KUBERNETES_SERVICE_PORT } from './service-proxy.js';
import { type EnvSources, containerEnv, containerIdentity, expand, quantity } from './pod-spec.js';
import { type ContainerRecord, type PodRecord, newRecord, now, waiting } from './pod-status.js';

const run = promisify(execFile);
const ENTER_POD = fileURLToPath(new URL('./enter-pod.sh', import.meta.url));
/** cgroup v2 hierarchy where each container gets a cgroup: how its processes are found and killed. */
const CGROUP_ROOT = KUBE_ENV.cgroupRoot;

export interface RunnerDeps {
  networks: PodNetworks;
  /** A tc rate for the Pod's veth (a degraded NIC on its node), or none. */
  linkRate?: string;
  /** Per-Pod directories (private /tmp, emptyDirs, logs) go under it. */
  rootDir: string;
  /** Put first on every container's PATH: the venv's `ray` and `python` play the image's. */
  venvBin: string;
  envSources: EnvSources;
  /** The host directory behind a PersistentVolumeClaim (its bound PV's hostPath). */
  pvcHostPath(namespace: string, claim: string): Promise<string>;
  /** The record changed: write the Pod status. */
  changed(): void;
  /** Containers start once it resolves (a test's stand-in for a long image pull). */
  hold?: (pod: V1Pod) => Promise<void>;
  /**
   * Stand-in for an image that lacks these executables (e.g. wget): the container's PATH is a
   * directory of links to the host's executables without them, so bash itself reports them missing.
   */
  withoutExecutables?: (pod: V1Pod) => string[];
  /** A probe failed: record it as the kubelet does (an Unhealthy Event on the Pod). */
  probeFailed?: (container: string, message: string) => void;
  /** The Pod's service account token and the cluster CA, for Pods that name a ServiceAccount. */
  serviceAccount?: (pod: V1Pod) => Promise<{ token: string; ca: string }>;
}

/** Where a Pod finds its service account, as the kubelet mounts it. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface Running {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  env: Record<string, string>;
}

/** A non-root container's home (rayproject/ray images: /home/ray, the `ray` user's). */
const IMAGE_HOME = '/home/ray';

/** Part of the stand-in kubelet: runs one Pod's containers as local processes in the Pod's network namespace. */
export class PodRunner {
  readonly record: PodRecord;
  net: PodNetwork | undefined;
  readonly id: string;
  private readonly dir: string;
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private mounts: [string, string, 'ro' | 'rw'][] = [];
  private tmpfs: string[] = [];
  /** The service account directory on the host, when the Pod has one mounted. */
  private serviceAccountDir: string | undefined;
  private started: Promise<void> = Promise.resolve();
  private markStopping: () => void = () => undefined;
  private readonly whenStopping = new Promise<void>((r) => (this.markStopping = r));

  constructor(
    public pod: V1Pod,
    private readonly deps: RunnerDeps,
  ) {
    this.id = (pod.metadata?.uid ?? '').replace(/-/g, '').slice(0, 10);
    this.dir = join(deps.rootDir, this.id);
    this.record = newRecord(pod.spec?.initContainers ?? [], pod.spec?.containers ?? [], NODE_IP);
  }

  get hostname(): string {
    return (this.pod.spec?.hostname ?? this.pod.metadata?.name ?? '').slice(0, 63);
  }

  get stopped(): boolean {
    return this.stopping;
  }

  start(): void {
    this.started = this.runPod().catch((err: Error) => {
      this.record.message = `stand-in kubelet: ${err.message}`;
      this.deps.changed();
    });
  }

  private async runPod(): Promise<void> {
    await mkdir(join(this.dir, 'tmp'), { recursive: true });
    // mkdir's mode goes through the umask (1755): chmod, so a non-root container can write its /tmp.
    await chmod(join(this.dir, 'tmp'), 0o1777);
    await mkdir(join(this.dir, 'logs'), { recursive: true });
    this.net = await this.deps.networks.create(this.pod.metadata?.uid ?? this.id);
    if (this.deps.linkRate) await this.deps.networks.limitRate(this.net, this.deps.linkRate);
    this.record.podIP = this.net.podIP;
    this.pod.status = { ...this.pod.status, podIP: this.net.podIP, hostIP: NODE_IP };
    this.deps.changed();
    try {
      await this.setUpVolumes();
      await this.setUpServiceAccount();
    } catch (err) {
      for (const c of this.record.containers)
        c.state = waiting('CreateContainerConfigError', (err as Error).message);
      this.deps.changed();
      return;
    }
    if (this.deps.hold) await Promise.race([this.deps.hold(this.pod), this.whenStopping]);
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    for (const [i, c] of (this.pod.spec?.initContainers ?? []).entries()) {
      const rec = this.record.initContainers[i]!;
      for (;;) {
        if (this.stopping) return;
        const exit = await this.runOnce(c, rec);
        if (this.stopping) return;
        if (exit === 0) break;
        if (policy === 'Never') {
          this.record.phase = 'Failed';
          this.deps.changed();
          return;
        }
        await this.backOff(rec);
      }
    }
    if (this.stopping) return;
    this.record.phase = 'Running';
    await Promise.all(
      (this.pod.spec?.containers ?? []).map((c, i) =>
        this.keepRunning(c, this.record.containers[i]!, policy),
      ),
    );
    if (this.stopping) return;
    this.record.phase = this.record.containers.every((c) => c.state.terminated?.exitCode === 0)
      ? 'Succeeded'
      : 'Failed';
    this.deps.changed();
  }

  /** A main container for the Pod's lifetime: restarted per restartPolicy with the kubelet's back-off. */
  private async keepRunning(c: V1Container, rec: ContainerRecord, policy: string): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      const exit = await this.runOnce(c, rec);
      if (this.stopping) return;
      if (policy === 'Never' || (policy === 'OnFailure' && exit === 0)) return;
      await this.backOff(rec);
    }
  }

  /** CrashLoopBackOff: 10 s, doubling, at most 300 s. */
  private async backOff(rec: ContainerRecord): Promise<void> {
    rec.lastState = rec.state;
    const delay = Math.min(300, 10 * 2 ** rec.restartCount);
    const exit = rec.state.terminated?.exitCode;
    rec.state = waiting(
      'CrashLoopBackOff',
      `back-off ${delay}s restarting failed container=${rec.name} pod=${this.pod.metadata?.name} (last exit ${exit})`,
    );
    rec.restartCount++;
    this.deps.changed();
    for (let t = 0; t < delay * 10 && !this.stopping; t++) await sleep(100);
  }

  private async cgroup(name: string): Promise<string> {
    const dir = join(CGROUP_ROOT, this.id, name);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Start the container, run its probes while it lives, record its end. Resolves with the exit code. */
  private async runOnce(c: V1Container, rec: ContainerRecord): Promise<number> {
    let env: Record<string, string>;
    const who = containerIdentity(this.pod, c);
    try {
      const base = this.baseEnv(who.uid);
      const missing = this.deps.withoutExecutables?.(this.pod) ?? [];
      if (missing.length) base['PATH'] = `${this.deps.venvBin}:${await this.binWithout(missing)}`;
      env = await containerEnv(this.pod, c, base, this.deps.envSources);
    } catch (err) {
      rec.state = waiting('CreateContainerConfigError', (err as Error).message);
      this.deps.changed();
      await sleep(2000);
      return 1;
    }
    const argv = [...(c.command ?? []), ...(c.args ?? [])].map((a) => expand(a, env));
    if (argv.length === 0) {
      rec.state = waiting(
        'CreateContainerError',
        'the stand-in kubelet has no image entrypoint: the container needs a command',
      );
      this.deps.changed();
      await sleep(2000);
      return 1;
    }
    const cgroup = await this.cgroup(c.name);
    const log = await open(join(this.dir, 'logs', `${c.name}.log`), 'a');
    const mounts = (c.volumeMounts ?? []).map((m) => {
      const source = this.mounts.find(([, name]) => name === m.name);
      if (!source) throw new Error(`volume ${m.name} not found`);
      return [m.subPath ? join(source[0], m.subPath) : source[0], m.mountPath, m.readOnly ? 'ro' : 'rw'];
    });
    // The venv plays the image's Python; in a checkout under /tmp the container's private /tmp
    // would hide it, so its checkout is bound back at the same path (read-only).
    if (this.serviceAccountDir) mounts.push([this.serviceAccountDir, SERVICE_ACCOUNT_DIR, 'ro']);
    const checkout = dirname(dirname(this.deps.venvBin));
    if (checkout.startsWith('/tmp/')) mounts.push([checkout, checkout, 'ro']);
    // The image's user owns its home directory (the image made it); one per container here.
    // And reads the image's Python: the venv's interpreter lives under the host's /root (0700),
    // so its install prefix is bound at the same path, reachable (enter-pod.sh opens the way).
    if (who.uid !== 0) {
      const python = await realpath(join(this.deps.venvBin, 'python')).catch(() => undefined);
      if (python && !python.startsWith(`${dirname(dirname(this.deps.venvBin))}/`)) {
        const prefix = dirname(dirname(python));
        mounts.push([prefix, prefix, 'ro']);
      }
      const home = join(this.dir, 'home', c.name);
      await mkdir(home, { recursive: true });
      await chown(home, who.uid, who.gid);
      mounts.push([home, IMAGE_HOME, 'rw']);
    }
    if (this.stopping) {
      await log.close();
      return 137;
    }
    const proc = spawn(
      '/bin/bash',
      [
        '-c',
        'echo $$ > "$0/cgroup.procs" && exec ip netns exec "$@"',
        cgroup,
        this.net!.netns,
        'unshare',
        '--uts',
        '--',
        '/bin/bash',
        ENTER_POD,
        this.hostname,
        c.workingDir ?? '/',
        join(this.dir, 'tmp'),
        join(this.dir, 'stage', c.name),
        String(who.uid),
        String(who.gid),
        who.groups.join(','),
        ...mounts.flat(),
        '--',
        ...argv,
      ],
      { env, detached: true, stdio: ['ignore', log.fd, log.fd] },
    );
    await log.close();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal })),
    );
    proc.once('error', () => undefined);
    this.running.set(c.name, { proc, exited, env });
    const startedAt = now();
    rec.state = { running: { startedAt } };
    rec.ready = c.readinessProbe === undefined;
    this.deps.changed();
    const probing = this.probe(c, rec, proc, env, who);
    const { code, signal } = await exited;
    probing.stop();
    this.running.delete(c.name);
    await this.killCgroup(c.name);
    const exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
    rec.ready = false;
    rec.state = {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        startedAt,
        finishedAt: now(),
        ...(signal ? { signal: signal === 'SIGKILL' ? 9 : 15 } : {}),
      },
    };
    this.deps.changed();
    return exitCode;
  }

  /** Readiness and liveness from the container's own probes (exec, httpGet, tcpSocket). */
  private probe(
    c: V1Container,
    rec: ContainerRecord,
    proc: ChildProcess,
    env: Record<string, string>,
    who: { uid: number; gid: number },
  ): { stop(): void } {
    const timers: NodeJS.Timeout[] = [];
    let stopped = false;
    const loop = (
      kind: 'Readiness' | 'Liveness',
      probe: V1Probe,
      onResult: (ok: boolean, failures: number, successes: number) => void,
    ) => {
      let failures = 0;
      let successes = 0;
      const tick = async () => {
        if (stopped) return;
        const { ok, output } = await this.check(probe, proc, env, who);
        if (stopped) return;
        // The kubelet's own event text (pkg/kubelet/prober): "<Kind> probe failed: <output>".
        if (!ok) this.deps.probeFailed?.(c.name, `${kind} probe failed: ${output}`);
        failures = ok ? 0 : failures + 1;
        successes = ok ? successes + 1 : 0;
        onResult(ok, failures, successes);
        timers.push(setTimeout(() => void tick(), (probe.periodSeconds ?? 10) * 1000));
      };
      timers.push(setTimeout(() => void tick(), (probe.initialDelaySeconds ?? 0) * 1000));
    };
    if (c.readinessProbe) {
      const p = c.readinessProbe;
      loop('Readiness', p, (ok, failures, successes) => {
        const ready = ok
          ? successes >= (p.successThreshold ?? 1) || rec.ready
          : failures < (p.failureThreshold ?? 3) && rec.ready;
        if (ready !== rec.ready) {
          rec.ready = ready;
          this.deps.changed();
        }
      });
    }
    if (c.livenessProbe) {
      const p = c.livenessProbe;
      loop('Liveness', p, (ok, failures) => {
        if (!ok && failures >= (p.failureThreshold ?? 3)) {
          stopped = true;
          void this.stopContainer(c.name, this.grace());
        }
      });
    }
    return {
      stop() {
        stopped = true;
        for (const t of timers) clearTimeout(t);
      },
    };
  }

  /** One probe run; a failed exec probe reports its output (stdout, then stderr), as the kubelet does. */
  private async check(
    probe: V1Probe,
    proc: ChildProcess,
    env: Record<string, string>,
    who: { uid: number; gid: number },
  ): Promise<{ ok: boolean; output: string }> {
    const timeout = (probe.timeoutSeconds ?? 1) * 1000;
    try {
      if (probe.exec?.command) {
        // Like `kubectl exec`: inside the container's own namespaces, as its user, with its environment.
        const as = who.uid === 0 ? [] : ['-S', String(who.uid), '-G', String(who.gid)];
        await run('nsenter', ['-t', String(proc.pid), '-n', '-m', '-u', ...as, '--', ...probe.exec.command], {
          env,
          timeout,
        });
        return { ok: true, output: '' };
      }
      if (probe.httpGet) {
        const res = await fetch(
          `http://${this.net?.podIP}:${probe.httpGet.port}${probe.httpGet.path ?? '/'}`,
          { signal: AbortSignal.timeout(timeout) },
        );
        const ok = res.status >= 200 && res.status < 400;
        return { ok, output: ok ? '' : `HTTP probe failed with statuscode: ${res.status}` };
      }
      if (probe.tcpSocket) {
        await run(
          'nsenter',
          [
            '-t',
            String(proc.pid),
            '-n',
            '--',
            'bash',
            '-c',
            `exec 3<>/dev/tcp/127.0.0.1/${probe.tcpSocket.port}`,
          ],
          { timeout },
        );
        return { ok: true, output: '' };
      }
    } catch (e) {
      const { stdout, stderr, killed } = e as { stdout?: string; stderr?: string; killed?: boolean };
      if (killed) return { ok: false, output: `command timed out` };
      return { ok: false, output: `${stdout ?? ''}${stderr ?? ''}`.trim() || String((e as Error).message) };
    }
    return { ok: true, output: '' };
  }

  /** A PATH directory with links to every host executable on the usual PATH except `missing`. */
  private async binWithout(missing: string[]): Promise<string> {
    const bin = join(this.dir, 'bin-without');
    await rm(bin, { recursive: true, force: true });
    await mkdir(bin, { recursive: true });
    for (const from of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
      for (const name of await readdir(from).catch(() => [] as string[])) {
        if (missing.includes(name)) continue;
        await symlink(join(from, name), join(bin, name)).catch(() => undefined); // first on PATH wins
      }
    }
    await chmod(bin, 0o755);
    return bin;
  }

  /** The environment every container starts from; the Pod's own variables are laid over it. */
  private baseEnv(uid: number): Record<string, string> {
    return {
      PATH: `${this.deps.venvBin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOSTNAME: this.hostname,
      HOME: uid === 0 ? '/root' : IMAGE_HOME,
      // Not a kubelet's: the test lane's marker (scripts/test.sh), so that a lane's leak check
      // counts its own Pods' Ray processes (test/helpers/processes.ts).
      ...(process.env['RAGEN_TEST_LANE'] ? { RAGEN_TEST_LANE: process.env['RAGEN_TEST_LANE'] } : {}),
      // The `kubernetes` Service, as the kubelet tells every container (only Pods with a
      // service account here: the others never talk to the API server).
      ...(this.serviceAccountDir
        ? {
            KUBERNETES_SERVICE_HOST: KUBERNETES_SERVICE_IP,
            KUBERNETES_SERVICE_PORT: String(KUBERNETES_SERVICE_PORT),
            KUBERNETES_SERVICE_PORT_HTTPS: String(KUBERNETES_SERVICE_PORT),
          }
        : {}),
    };
  }

  /**
   * A Pod that names a ServiceAccount gets its token (TokenRequest, bound to the Pod), the cluster
   * CA and its namespace at /var/run/secrets/kubernetes.io/serviceaccount, as the kubelet projects
   * them. Pods without serviceAccountName get none: the ServiceAccount admission plugin, which
   * would name `default`, is off in the test API server.
   */
  private async setUpServiceAccount(): Promise<void> {
    const spec = this.pod.spec;
    if (!spec?.serviceAccountName || spec.automountServiceAccountToken === false || !this.deps.serviceAccount)
      return;
    const { token, ca } = await this.deps.serviceAccount(this.pod);
    const dir = join(this.dir, 'serviceaccount');
    await mkdir(dir, { recursive: true });
    // The kubelet's default mode for projected files: the container's user, whoever it is, reads them.
    await writeFile(join(dir, 'token'), token, { mode: 0o644 });
    await writeFile(join(dir, 'ca.crt'), ca);
    await writeFile(join(dir, 'namespace'), this.pod.metadata?.namespace ?? 'default');
    this.serviceAccountDir = dir;
  }

  /** emptyDir (tmpfs for medium Memory, sized by sizeLimit), persistentVolumeClaim (its PV's hostPath), hostPath, secret, configMap. */
  private async setUpVolumes(): Promise<void> {
    const ns = this.pod.metadata?.namespace ?? 'default';
    for (const v of this.pod.spec?.volumes ?? []) {
      const dir = join(this.dir, 'volumes', v.name);
      if (v.emptyDir) {
        // World-writable, as the kubelet makes an emptyDir: any container user writes to it.
        await mkdir(dir, { recursive: true });
        await chmod(dir, 0o777);
        if (v.emptyDir.medium === 'Memory') {
          const size = v.emptyDir.sizeLimit
            ? `,size=${Math.ceil(quantity(v.emptyDir.sizeLimit) / 1024)}k`
            : '';
          await run('mount', ['-t', 'tmpfs', '-o', `mode=1777${size}`, 'tmpfs', dir]);
          this.tmpfs.push(dir);
        }
        this.mounts.push([dir, v.name, 'rw']);
      } else if (v.persistentVolumeClaim) {
        this.mounts.push([
          await this.deps.pvcHostPath(ns, v.persistentVolumeClaim.claimName),
          v.name,
          v.persistentVolumeClaim.readOnly ? 'ro' : 'rw',
        ]);
      } else if (v.hostPath) {
        this.mounts.push([v.hostPath.path, v.name, 'rw']);
      } else if (v.secret || v.configMap) {
        const name = v.secret?.secretName ?? v.configMap?.name ?? '';
        const data = v.secret
          ? await this.deps.envSources.secret(name)
          : await this.deps.envSources.configMap(name);
        if (!data && !(v.secret?.optional ?? v.configMap?.optional))
          throw new Error(`${v.secret ? 'secret' : 'configmap'} "${name}" not found`);
        await mkdir(dir, { recursive: true });
        // defaultMode 0644 unless the volume sets one, as the kubelet writes them.
        const mode = v.secret?.defaultMode ?? v.configMap?.defaultMode ?? 0o644;
        for (const [k, value] of Object.entries(data ?? {})) await writeFile(join(dir, k), value, { mode });
        this.mounts.push([dir, v.name, 'ro']);
      } else {
        throw new Error(
          `volume ${v.name}: only emptyDir, persistentVolumeClaim, hostPath, secret and configMap volumes are supported by the stand-in kubelet`,
        );
      }
    }
    // The mount list is [source, volume name, mode] until a container maps the name to its mountPath.
  }

  private grace(): number {
    return (
      this.pod.metadata?.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30
    );
  }

  /** SIGTERM to the container's main process, up to `graceSeconds` for it to exit, then kill its cgroup. */
  private async stopContainer(name: string, graceSeconds: number): Promise<void> {
    const r = this.running.get(name);
    if (!r) return;
    try {
      process.kill(r.proc.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    const timedOut = await Promise.race([
      r.exited.then(() => false),
      sleep(graceSeconds * 1000).then(() => true),
    ]);
    if (timedOut) await this.killCgroup(name);
    await r.exited;
  }

  /** Every process of the Pod, from its containers' cgroups (what `crictl ps` + `ps` show on a node). */
  async processes(): Promise<number[]> {
    const pids: number[] = [];
    for (const c of await readdir(join(CGROUP_ROOT, this.id), { withFileTypes: true }).catch(() => [])) {
      if (!c.isDirectory()) continue;
      const procs = await readFile(join(CGROUP_ROOT, this.id, c.name, 'cgroup.procs'), 'utf8').catch(
        () => '',
      );
      pids.push(...procs.split('\n').filter(Boolean).map(Number));
    }
    return pids;
  }

  /** Every process left in the container's cgroup (Ray's daemons outlive `ray start`), killed. */
  private async killCgroup(name: string): Promise<void> {
    const dir = join(CGROUP_ROOT, this.id, name);
    for (let i = 0; i < 50; i++) {
      const procs = (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).trim();
      if (!procs) return;
      await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
      await sleep(100);
    }
    throw new Error(`processes left in ${dir} after kill`);
  }

  /** Pod deletion: stop every container (grace period, then kill), then remove the network and directories. */
  async terminate(graceSeconds = this.grace()): Promise<void> {
    this.stopping = true;
    this.markStopping();
    await Promise.all([...this.running.keys()].map((name) => this.stopContainer(name, graceSeconds)));
    await this.started;
    for (const name of [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])].map(
      (c) => c.name,
    )) {
      await this.killCgroup(name);
      await rmdir(join(CGROUP_ROOT, this.id, name)).catch(() => undefined);
    }
    await rmdir(join(CGROUP_ROOT, this.id)).catch(() => undefined);
    if (this.net) await this.deps.networks.remove(this.net.netns, this.net.podIP);
    for (const dir of this.tmpfs) await run('umount', ['-l', dir]).catch(() => undefined);
    if (!process.env['KEEP_KUBE_ENV']) await rm(this.dir, { recursive: true, force: true });
  }
}
