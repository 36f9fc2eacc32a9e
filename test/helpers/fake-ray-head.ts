import type { RayHeadApi, RayJobInfo, RayJobStatus } from '../../src/backends/ray/dashboard-client.js';
import type { ComputeBackend } from '../../src/backends/backend.js';
import type { ClusterStatus } from '../../src/domain/cluster.js';

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
  async submitJob(id: string) {
    const created = !this.submitted.includes(id);
    this.submitted.push(id);
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
  /** Bytes sent by jobLogTail, for tests of incremental reading. */
  tailBytesSent = 0;
  /** The last `lines` lines of `logs`, counted as Ray's tail counts them (a partial last line is one). */
  async jobLogTail(_id: string, _node: string, lines: number) {
    const bytes = Buffer.from(this.logs);
    const tail = bytes.subarray(startOfLastLines(bytes, lines));
    this.tailBytesSent += tail.length;
    return tail;
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
  };
}

export const readyCluster = (workers: number, gpus: number): ClusterStatus => ({
  phase: 'ready',
  nodes: [],
  workersAlive: workers,
  gpusRegistered: gpus,
  headRayVersion: '2.60.0',
});

/** Offset where the last `n` lines of `bytes` begin (Ray's find_start_offset_last_n_lines_from_offset). */
export function startOfLastLines(bytes: Buffer, n: number): number {
  // Ray counts a last line without `\n` as a line; so the start is after the k-th `\n` from the end.
  let k = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a ? n + 1 : n;
  for (let i = bytes.length - 1; i >= 0; i--) if (bytes[i] === 0x0a && --k === 0) return i + 1;
  return 0;
}
