import { execFile } from 'node:child_process';
import { readdir, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isDomainError, permanent, transient } from '../../errors/domain-error.js';
import type { ClusterHandle, ClusterStatus } from '../../domain/cluster/cluster.js';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { shortHash } from '../../domain/spec/naming.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import type { BackendLogger } from '../logger.js';
import type { ComputeBackend, CreateClusterRequest, OwnedCluster, PreflightCheck } from '../backend.js';
import { statusFromHead } from '../ray/head-status.js';
import {
  type LauncherConfig,
  NODE_PORTS,
  ensureDir,
  startHead,
  startWorker,
  stopCluster,
  waitForAliveNodes,
} from './launcher.js';
import { freePorts } from './ports.js';
import { liveSuspects, type NodeLedgerStore } from '../../domain/node-health/node-ledger.js';
import { NodeLedgerFile } from './node-ledger-file.js';
import { LOCAL_WORKER_SLOTS, assignSlots } from './slots.js';
import { clusterProcesses, pidAlive } from './processes.js';
import { type LocalClusterState, clusterDir, readState, writeState } from './state.js';
import { authTokenPath, readAuthToken, writeNewAuthToken } from './auth-token.js';

const execFileAsync = promisify(execFile);

export interface LocalBackendConfig extends LauncherConfig {
  /** Root for cluster dirs (Ray temp dir, logs, state). Keep it short: Ray's socket paths are long. */
  runRoot: string;
  /** The interpreter every node runs (the venv's python, which has the payload installed). */
  python: string;
  /** Escalations (SIGKILL in teardown) are logged here. */
  logger?: BackendLogger;
  /**
   * More environment for the processes of the worker node in a slot. Tests inject stand-ins through
   * it (a slow link on one slot); the worker itself never sets it.
   */
  workerEnv?: (slot: number) => Record<string, string>;
}

/**
 * The embedded default: a real Ray cluster of processes on this machine: a head with 0 GPUs and one
 * node per worker replica with logical GPUs (`ray start --num-gpus`), dashboard on loopback.
 */
export class LocalBackend implements ComputeBackend {
  readonly kind = 'local' as const;

  private readonly ledger: NodeLedgerStore;

  constructor(readonly config: LocalBackendConfig) {
    this.ledger = new NodeLedgerFile(config.runRoot);
  }

  resolveArgv(argv: readonly string[]): string[] {
    return argv.map((a, i) => (i === 0 && a === 'python' ? this.config.python : a));
  }

  /** `ray --version` starts Python and imports Ray (a second of CPU): asked once per installed `ray`. */
  private rayVersion: { mtimeMs: number; version: Promise<string | undefined> } | undefined;

  async plannedRayVersion(): Promise<string | undefined> {
    // Keyed by the executable's mtime: reinstalling Ray in the venv rewrites it, and is asked again.
    const { mtimeMs } = await stat(this.config.rayBin);
    if (this.rayVersion?.mtimeMs !== mtimeMs) {
      const version = execFileAsync(this.config.rayBin, ['--version'], { timeout: 60_000 }).then(
        ({ stdout }) => /version (\S+)/.exec(stdout)?.[1],
      );
      this.rayVersion = { mtimeMs, version };
      // A failed call is not remembered: the next stage asks again.
      version.catch(() => {
        if (this.rayVersion?.version === version) this.rayVersion = undefined;
      });
    }
    return this.rayVersion.version;
  }

  async preflight(spec: ExperimentSpec): Promise<PreflightCheck[]> {
    const checks: PreflightCheck[] = [];
    try {
      const version = await this.plannedRayVersion();
      checks.push({
        name: 'ray-installed',
        ok: version !== undefined,
        detail: `${this.config.rayBin} reports Ray ${version ?? '(unknown)'}`,
      });
    } catch (err) {
      checks.push({
        name: 'ray-installed',
        ok: false,
        detail: `${this.config.rayBin} --version failed: ${(err as Error).message}; run scripts/setup.sh`,
      });
    }
    // Logical GPUs need no devices, but every node is a real process: refuse shapes this host cannot hold.
    const nodes = 1 + spec.cluster.workerGroups.reduce((n, g) => n + g.replicas, 0);
    checks.push({
      name: 'capacity',
      ok: nodes <= 16,
      detail: `${nodes} Ray nodes requested on one host (at most 16)`,
    });
    await ensureDir(this.config.runRoot);
    const fs = await statfs(this.config.runRoot);
    const freeGb = (fs.bavail * fs.bsize) / 1e9;
    checks.push({
      name: 'run-root-space',
      ok: freeGb > 1,
      detail: `${freeGb.toFixed(1)} GB free under ${this.config.runRoot}`,
    });
    return checks;
  }

  async createCluster({ name, spec, owner }: CreateClusterRequest): Promise<ClusterHandle> {
    const dir = clusterDir(this.config.runRoot, name);
    const existing = await readState(dir);
    if (existing && existing.complete && existing.nodes.every((n) => pidAlive(n.pid)))
      return this.handle(existing);
    if (existing) {
      // A create that died half-way: remove what it left, then start one clean cluster under the same name.
      await stopCluster(existing);
    }
    const [gcsPort, dashboardPort] = (await freePorts(2)) as [number, number];
    const state: LocalClusterState = {
      name,
      owner,
      createdAt: new Date().toISOString(),
      nodeIp: this.config.nodeIp,
      gcsPort,
      dashboardUrl: `http://127.0.0.1:${dashboardPort}`,
      // Ray's unix sockets live under <temp>/session_<timestamp>/sockets/ and must fit in 107 bytes:
      // the temp dir is <runRoot>/<8 hex>, not the (long) cluster dir.
      tempDir: join(this.config.runRoot, shortHash(name)),
      complete: false,
      nodes: [],
    };
    await ensureDir(state.tempDir);
    await writeState(dir, state);
    const token = await writeNewAuthToken(dir); // a new cluster, a new token
    state.nodes.push(await startHead(this.config, state, dir, spec.cluster.head.cpus));
    await writeState(dir, state);
    const workers = spec.cluster.workerGroups.flatMap((group) =>
      Array.from({ length: group.replicas }, (_, index) => ({
        group: group.name,
        index,
        gpus: group.gpusPerWorker,
        cpus: group.cpusPerWorker,
      })),
    );
    const slots = await this.healthySlots(workers.length);
    // Every worker node has its own temp dir and ports (see startWorker): all start at once.
    const ports = await freePorts(NODE_PORTS * workers.length);
    const started = await Promise.allSettled(
      workers.map((w, ordinal) =>
        startWorker(
          this.config,
          state,
          dir,
          { ...w, ordinal, slot: slots[ordinal]! },
          ports.slice(ordinal * NODE_PORTS, (ordinal + 1) * NODE_PORTS),
          this.config.workerEnv?.(slots[ordinal]!) ?? {},
        ),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') state.nodes.push(s.value);
    await writeState(dir, state);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    // A node that does not register in time is left to the join stage to report.
    await waitForAliveNodes(state.dashboardUrl, state.nodes.length, undefined, token);
    state.complete = true;
    await writeState(dir, state);
    return this.handle(state);
  }

  nodeLedger(): NodeLedgerStore {
    return this.ledger;
  }

  /** The first `count` worker slots the node ledger does not exclude (slots.ts). */
  private async healthySlots(count: number): Promise<number[]> {
    const avoid = liveSuspects(await this.ledger.read(), new Date());
    const slots = assignSlots(
      count,
      avoid.map((s) => s.node),
    );
    if (slots) return slots;
    throw permanent(
      ErrorTypes.TooFewHealthyNodes,
      `the cluster needs ${count} worker slots and this host has ${LOCAL_WORKER_SLOTS}, ${avoid.length} of them link suspects in ${this.ledger.where} ` +
        `(${avoid.map((s) => `${s.node} until ${s.expires}`).join(', ')}); clear them with \`ragen-orchestrator nodes clear\` once the host is fixed`,
      { needed: count, suspects: avoid.map((s) => s.node) },
    );
  }

  async describeCluster(handle: ClusterHandle): Promise<ClusterStatus> {
    const state = await readState(clusterDir(this.config.runRoot, handle.name));
    if (!state)
      return {
        phase: 'gone',
        nodes: [],
        workersAlive: 0,
        gpusRegistered: 0,
        message: 'no state file: the cluster does not exist',
      };
    const head = state.nodes.find((n) => n.role === 'head');
    if (!head || !pidAlive(head.pid)) {
      return {
        phase: state.complete ? 'failed' : 'pending',
        nodes: [],
        workersAlive: 0,
        gpusRegistered: 0,
        message: 'the Ray head process is not running',
      };
    }
    return statusFromHead(state.dashboardUrl, undefined, await this.dashboardToken(handle));
  }

  /** Read at call time from the cluster's 0600 token file: the handle never carries the token. */
  async dashboardToken(handle: ClusterHandle): Promise<string | undefined> {
    return readAuthToken(clusterDir(this.config.runRoot, handle.name));
  }

  async deleteCluster(handle: ClusterHandle): Promise<{ alreadyGone: boolean }> {
    const dir = clusterDir(this.config.runRoot, handle.name);
    let state: LocalClusterState | undefined;
    try {
      state = await readState(dir);
    } catch (err) {
      if (!isDomainError(err) || err.type !== ErrorTypes.StateFileInvalid) throw err;
      // Not followed: only processes that carry this cluster's marker are stopped; the file stays.
      this.config.logger?.warn('teardown: state file not trusted; stopping marked processes only', {
        cluster: handle.name,
        problem: err.message,
      });
      const left = await stopCluster({ name: handle.name, nodes: [] }, undefined, this.config.logger);
      if (left.length > 0)
        throw transient(
          TransientErrorTypes.TeardownIncomplete,
          `teardown of ${handle.name}: processes still alive after SIGKILL: ${left.join(', ')}`,
        );
      return { alreadyGone: false };
    }
    const stray = state ? [] : await clusterProcesses(handle.name);
    if (!state && stray.length === 0) return { alreadyGone: true };
    const left = await stopCluster(state ?? { name: handle.name, nodes: [] }, undefined, this.config.logger);
    if (left.length > 0)
      throw transient(
        TransientErrorTypes.TeardownIncomplete,
        `teardown of ${handle.name}: processes still alive after SIGKILL: ${left.join(', ')}`,
      );
    // Logs stay for the user; the state file goes, which is what "the cluster exists" means here.
    await rm(join(dir, 'cluster.json'), { force: true });
    await rm(authTokenPath(dir), { force: true });
    await rm(state?.tempDir ?? join(this.config.runRoot, shortHash(handle.name)), {
      recursive: true,
      force: true,
    });
    return { alreadyGone: false };
  }

  async listClusters(): Promise<OwnedCluster[]> {
    let entries: string[];
    try {
      entries = await readdir(this.config.runRoot);
    } catch {
      return [];
    }
    const found: OwnedCluster[] = [];
    for (const name of entries) {
      const dir = clusterDir(this.config.runRoot, name);
      try {
        const state = await readState(dir);
        if (state) found.push({ handle: this.handle(state), owner: state.owner, createdAt: state.createdAt });
      } catch (err) {
        found.push({
          handle: {
            backend: 'local',
            name,
            owner: { experiment: '?', workflowId: '?', runId: '?', attempt: 0 },
          },
          owner: undefined,
          problem: `unreadable state: ${(err as Error).message}`,
        });
      }
    }
    return found;
  }

  private handle(state: LocalClusterState): ClusterHandle {
    return { backend: 'local', name: state.name, dashboardUrl: state.dashboardUrl, owner: state.owner };
  }
}
