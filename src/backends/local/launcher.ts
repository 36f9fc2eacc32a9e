import { spawn } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { transient } from '../../errors/domain-error.js';
import { TransientErrorTypes } from '../../domain/error-types.js';
import { RayDashboardClient } from '../ray/dashboard-client.js';
import { freePorts } from './ports.js';
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `ray start --block` detached into its own session, logging to the cluster dir; returns its pid. */
async function startRayNode(
  config: LauncherConfig,
  state: LocalClusterState,
  dir: string,
  node: Omit<LocalNode, 'pid'>,
  args: string[],
): Promise<number> {
  const ports = await freePorts(6);
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
      `--temp-dir=${state.tempDir}`,
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
        ...rayAuthEnv(dir),
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
  const dashboard = new RayDashboardClient(state.dashboardUrl, await readAuthToken(dir));
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
      await sleep(500);
    }
  }
}

/** Start one worker node that joins the head's GCS; joining is observed later by the join stage. */
export async function startWorker(
  config: LauncherConfig,
  state: LocalClusterState,
  dir: string,
  group: string,
  index: number,
  gpus: number,
  cpus: number,
): Promise<LocalNode> {
  const node = { role: 'worker' as const, group, index, gpus, cpus };
  const pid = await startRayNode(config, state, dir, node, [`--address=${state.nodeIp}:${state.gcsPort}`]);
  return { ...node, pid };
}

/**
 * Nodes sharing a host and temp dir pick their socket names (`raylet.N`) by looking at what exists,
 * so two starting at once collide and one times out. Wait for each node to register before the next.
 */
export async function waitForAliveNodes(
  dashboardUrl: string,
  count: number,
  timeoutMs = 60_000,
  token?: string,
): Promise<boolean> {
  const dashboard = new RayDashboardClient(dashboardUrl, token);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await dashboard.nodes()).filter((n) => n.alive).length >= count) return true;
    } catch {
      // the dashboard may be busy while a node registers
    }
    await sleep(300);
  }
  return false;
}

/**
 * Stop every process of the cluster: SIGTERM the node process groups, then anything left that
 * carries the cluster's marker, then SIGKILL. Returns the pids still alive at the end (should be none).
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
  const deadline = Date.now() + graceMs;
  let left = await clusterProcesses(state.name);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250);
    left = await clusterProcesses(state.name);
  }
  if (left.length > 0) {
    logger.warn('teardown: processes outlived SIGTERM; sending SIGKILL', {
      cluster: state.name,
      pids: left,
      graceMs,
    });
    for (const node of state.nodes) signalProcessGroup(node.pid, 'SIGKILL');
    signalPids(left, 'SIGKILL');
    await sleep(500);
    left = await clusterProcesses(state.name);
  }
  return left;
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}
