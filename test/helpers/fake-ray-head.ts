import {
  EMPTY_LEDGER,
  type NodeLedger,
  type NodeLedgerStore,
} from '../../src/domain/node-health/node-ledger.js';
import type { RayHeadApi, RayJobInfo, RayJobStatus } from '../../src/backends/ray/dashboard-client.js';
import type { ComputeBackend } from '../../src/backends/backend.js';
import type { ClusterStatus } from '../../src/domain/cluster/cluster.js';

/**
 * Stand-in for a Ray head in activity unit tests (the real head is exercised by the integration
 * tests). A test scripts the job's status and logs; calls are recorded.
 */
export class FakeRayHead implements RayHeadApi {
  status: RayJobStatus = 'RUNNING';
  /** JobInfo.driver_exit_code once the job ended (undefined: as Ray before 2.7 reports it). */
  exitCode: number | undefined;
  logs = '';
  submitted: string[] = [];
  stopped: string[] = [];
  async rayVersion() {
    return '2.60.0';
  }
  async nodes() {
    return [];
  }
  /** Each submitted job's runtime_env env_vars. */
  envVars: Record<string, string>[] = [];
  async submitJob(id: string, _entrypoint?: string, envVars: Record<string, string> = {}) {
    const created = !this.submitted.includes(id);
    this.submitted.push(id);
    this.envVars.push(envVars);
    return { created };
  }
  async job(id: string): Promise<RayJobInfo> {
    return {
      submissionId: id,
      status: this.status,
      message: '',
      ...(this.exitCode === undefined ? {} : { driverExitCode: this.exitCode }),
      driverNodeId: 'stand-in-node',
    };
  }
  async jobLogs() {
    return this.logs;
  }
  /** Bytes sent to followers of the log, for tests of incremental reading. */
  followedBytes = 0;
  /** Follows `logs` as Ray's log stream does: from byte 0, then what is appended, every 10 ms. */
  async followJobLog(_id: string, _node: string, onData: (chunk: Buffer) => void) {
    let sent = 0;
    const push = () => {
      const bytes = Buffer.from(this.logs);
      if (bytes.length > sent) {
        this.followedBytes += bytes.length - sent;
        onData(bytes.subarray(sent));
        sent = bytes.length;
      }
    };
    push();
    const timer = setInterval(push, 10);
    return { close: () => clearInterval(timer) };
  }
  packages = new Map<string, Buffer>();
  async packageExists(name: string) {
    return this.packages.has(name);
  }
  async uploadPackage(name: string, bytes: Buffer) {
    this.packages.set(name, bytes);
  }
  async stopJob(id: string) {
    this.stopped.push(id);
    this.status = 'STOPPED';
  }
}

/** Stand-in backend whose describeCluster answers what the test sets. */
export function fakeBackend(status: () => ClusterStatus): ComputeBackend {
  return {
    kind: 'local',
    resolveArgv: (argv) => [...argv],
    preflight: async () => [],
    plannedRayVersion: async () => '2.60.0',
    createCluster: async () => {
      throw new Error('not used');
    },
    describeCluster: async () => status(),
    deleteCluster: async () => ({ alreadyGone: false }),
    listClusters: async () => [],
    dashboardToken: async () => undefined,
    nodeLedger: () => memoryLedger(),
  };
}

/** A node ledger in memory, for backends of unit tests that never record a suspect. */
export function memoryLedger(): NodeLedgerStore {
  let ledger: NodeLedger = EMPTY_LEDGER;
  return {
    where: 'memory',
    read: async () => ledger,
    update: async (change) => (ledger = change(ledger)),
  };
}

export const readyCluster = (workers: number, gpus: number): ClusterStatus => ({
  phase: 'ready',
  nodes: [],
  workersAlive: workers,
  gpusRegistered: gpus,
  headRayVersion: '2.60.0',
});
