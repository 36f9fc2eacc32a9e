import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { POLLING_CALLER } from '../../errors/retry-transient.js';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { transient } from '../../errors/domain-error.js';
import { TransientErrorTypes } from '../../domain/failures/error-types.js';
import { RayDashboardClient } from '../ray/dashboard-client.js';
import { freePorts } from './ports.js';
import { localSlotName } from './slots.js';
import {
  CLUSTER_ENV_MARKER,
  clusterProcesses,
  pidAlive,
  signalPids,
  signalProcessGroup,
} from './processes.js';
import type { LocalClusterState, LocalNode } from './state.js';
import { rayAuthEnv, readAuthToken } from './auth-token.js';
import { type BackendLogger, quietLogger } from '../logger.js';

export interface LauncherConfig {
  /** The venv's `ray` executable. */
  rayBin: string;
  /** A loopback address for every node; 127.0.0.1 itself is rewritten by Ray to the host's address. */
  nodeIp: string;
}

/** Ports every node needs besides the head's own (node manager, object manager, agents, metrics). */
export const NODE_PORTS = 6;

/** `ray start --block` detached into its own session, logging to the cluster dir; returns its pid. */
async function startRayNode(
  config: LauncherConfig,
  state: LocalClusterState,
  dir: string,
  node: Omit<LocalNode, 'pid'>,
  args: string[],
  tempDir = state.tempDir,
  reserved?: number[],
  extraEnv: Record<string, string> = {},
): Promise<number> {
  const ports = reserved ?? (await freePorts(NODE_PORTS));
  const [nodeManager, objectManager, agentListen, agentGrpc, metrics, runtimeEnv] = ports as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const log = await open(join(dir, `${node.role}-${node.group}-${node.index}.log`), 'a');
  const child = spawn(
    config.rayBin,
    [
      'start',
      '--block',
      ...args,
      `--node-ip-address=${config.nodeIp}`,
      `--num-cpus=${node.cpus}`,
      `--num-gpus=${node.gpus}`,
      `--temp-dir=${tempDir}`,
      `--node-manager-port=${nodeManager}`,
      `--object-manager-port=${objectManager}`,
      `--dashboard-agent-listen-port=${agentListen}`,
      `--dashboard-agent-grpc-port=${agentGrpc}`,
      `--metrics-export-port=${metrics}`,
      `--runtime-env-agent-port=${runtimeEnv}`,
      '--min-worker-port=0',
      '--max-worker-port=0',
      '--disable-usage-stats',
    ],
    {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      env: {
        ...process.env,
        [CLUSTER_ENV_MARKER]: state.name,
        RAY_USAGE_STATS_ENABLED: '0',
        RAY_DEDUP_LOGS: '0',
        // `ray start --block` answers SIGTERM by draining its node for up to 30 s (for Ray Serve
        // proxies) before it stops its processes; a torn-down local cluster has nothing to drain.
        RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S: '0',
        ...rayAuthEnv(dir),
        ...extraEnv,
      },
    },
  );
  child.unref();
  await log.close();
  if (child.pid === undefined)
    throw transient(
      TransientErrorTypes.ClusterStartFailed,
      `could not start ray for ${node.role} node of ${state.name}`,
    );
  return child.pid;
}

/** Start the head (0 GPUs) and wait until its dashboard answers. */
export async function startHead(
  config: LauncherConfig,
  state: LocalClusterState,
  dir: string,
  cpus: number,
  readyTimeoutMs = 90_000,
): Promise<LocalNode> {
  const [clientServer] = (await freePorts(1)) as [number];
  const dashboardPort = Number(new URL(state.dashboardUrl).port);
  const node = { role: 'head' as const, group: 'head', index: 0, gpus: 0, cpus };
  const pid = await startRayNode(config, state, dir, node, [
    '--head',
    `--port=${state.gcsPort}`,
    `--dashboard-port=${dashboardPort}`,
    '--dashboard-host=127.0.0.1',
    '--include-dashboard=true',
    `--ray-client-server-port=${clientServer}`,
  ]);
  const dashboard = new RayDashboardClient(state.dashboardUrl, await readAuthToken(dir), POLLING_CALLER);
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (!pidAlive(pid))
      throw transient(
        TransientErrorTypes.ClusterStartFailed,
        `the Ray head of ${state.name} exited during start; see ${dir}/head-head-0.log`,
      );
    try {
      await dashboard.rayVersion();
      return { ...node, pid };
    } catch {
      if (Date.now() > deadline)
        throw transient(
          TransientErrorTypes.ClusterStartFailed,
          `the Ray head of ${state.name} did not answer on ${state.dashboardUrl} within ${readyTimeoutMs / 1000} s`,
        );
      await sleep(HEAD_POLL_MS);
    }
  }
}

/** The head's dashboard comes up a few seconds after `ray start`; a short poll adds little to that. */
const HEAD_POLL_MS = 100;
const NODES_POLL_MS = 150;

/**
 * Start one worker node that joins the head's GCS; joining is observed later by the join stage.
 * Nodes sharing a host and a temp dir pick their socket names (`raylet.N`, `plasma_store.N`) by
 * looking at what exists, so two starting at once would collide. Each worker therefore gets a temp
 * dir of its own (`<cluster temp>/w<ordinal>`: Ray 2.60 honours `--temp-dir` on worker nodes)
 * and its own ports (`ports`: NODE_PORTS of them, reserved in one freePorts call for all workers,
 * so no two get the same): the workers of a cluster start concurrently.
 */
export async function startWorker(
  config: LauncherConfig,
  state: LocalClusterState,
  dir: string,
  node: { group: string; index: number; gpus: number; cpus: number; ordinal: number; slot: number },
  ports: number[],
  extraEnv: Record<string, string> = {},
): Promise<LocalNode> {
  const { ordinal, ...rest } = node;
  const worker = { role: 'worker' as const, ...rest };
  const tempDir = join(state.tempDir, `w${ordinal}`);
  await mkdir(tempDir, { recursive: true });
  const pid = await startRayNode(
    config,
    state,
    dir,
    worker,
    [`--address=${state.nodeIp}:${state.gcsPort}`],
    tempDir,
    ports,
    { ...extraEnv, RAGEN_ORCH_NODE_NAME: localSlotName(node.slot) },
  );
  return { ...worker, pid };
}

/** Poll the head until `count` nodes are alive (or the timeout passes: the join stage reports it). */
export async function waitForAliveNodes(
  dashboardUrl: string,
  count: number,
  timeoutMs = 60_000,
  token?: string,
): Promise<boolean> {
  const dashboard = new RayDashboardClient(dashboardUrl, token, POLLING_CALLER);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await dashboard.nodes()).filter((n) => n.alive).length >= count) return true;
    } catch {
      // the dashboard may be busy while a node registers
    }
    await sleep(NODES_POLL_MS);
  }
  return false;
}

/** How often teardown looks for the cluster's processes (a /proc scan), and how long after SIGKILL. */
const EXIT_POLL_MS = 100;
const KILL_WAIT_MS = 2_000;

/** The cluster's processes still alive once all are gone or `withinMs` passed, looking every EXIT_POLL_MS. */
async function processesLeft(name: string, withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  let left = await clusterProcesses(name);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(EXIT_POLL_MS);
    left = await clusterProcesses(name);
  }
  return left;
}

/**
 * Stop every process of the cluster: SIGTERM the node process groups, then anything left that
 * carries the cluster's marker, then SIGKILL what outlives `graceMs`; whether they are gone is
 * checked every EXIT_POLL_MS, with no fixed sleep. Returns the pids still alive at the end (should be none).
 */
export async function stopCluster(
  state: Pick<LocalClusterState, 'name' | 'nodes'>,
  graceMs = 5_000,
  logger: BackendLogger = quietLogger,
): Promise<number[]> {
  const workersFirst = [...state.nodes].sort((a, b) =>
    a.role === b.role ? 0 : a.role === 'worker' ? -1 : 1,
  );
  for (const node of workersFirst) signalProcessGroup(node.pid, 'SIGTERM');
  signalPids(await clusterProcesses(state.name), 'SIGTERM');
  let left = await processesLeft(state.name, graceMs);
  if (left.length > 0) {
    logger.warn('teardown: processes outlived SIGTERM; sending SIGKILL', {
      cluster: state.name,
      pids: left,
      graceMs,
    });
    for (const node of state.nodes) signalProcessGroup(node.pid, 'SIGKILL');
    signalPids(left, 'SIGKILL');
    left = await processesLeft(state.name, KILL_WAIT_MS);
  }
  return left;
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}
