import { setTimeout as sleep } from 'node:timers/promises';
import { readFile } from 'node:fs/promises';
import { activityRetry } from '../../src/activities/common/heartbeat-loop.js';
import { type RayHeadApi, RayDashboardClient } from '../../src/backends/ray/dashboard-client.js';
import { requestJson } from '../../src/backends/ray/http.js';
import type { RetryEvent } from '../../src/errors/retry-transient.js';

/**
 * A Ray dashboard that stops answering for a while, as a loaded head node does: its real process
 * is stopped with SIGSTOP and continued with SIGCONT. The activities talk to it through the real
 * client; this only picks the moments. Used by the local and the kuberay stall tests.
 */

async function cmdline(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ');
}

/** The dashboard head's process among `pids` (not its agent, not its modules' subprocesses). */
export async function dashboardPidAmong(pids: readonly number[]): Promise<number | undefined> {
  for (const pid of pids) if (/ray\/dashboard\/dashboard\.py/.test(await cmdline(pid))) return pid;
  return undefined;
}

export interface Stall {
  what: string;
  pid: number;
  stoppedAt: number;
  continuedAt?: number;
}

/** One Ray job of the cluster as the Jobs API lists it. */
interface ListedJob {
  submission_id?: string | null;
  type?: string;
}

/**
 * Hands the activities real dashboard clients (with the worker's in-place retry, every retry
 * recorded) and stalls the dashboard twice: as the training job is submitted (the POST goes to a
 * stopped process), and at the first poll of the running training job at least `gapMs` after the
 * first stall ended. Before the last stage's job (validate) reads its logs, it lists the cluster's
 * jobs: each stage must have exactly one.
 */
export class DashboardStalls {
  readonly stalls: Stall[] = [];
  readonly retries: RetryEvent[] = [];
  /** Every submitJob call: its id and whether Ray made a new job. */
  readonly submits: { id: string; created: boolean }[] = [];
  jobsAtEnd: string[] | undefined;
  private trainId: string | undefined;

  constructor(
    /** The dashboard process of the cluster named so. */
    private readonly findDashboard: (cluster: string) => Promise<number | undefined>,
    private readonly stallMs = 15_000,
    private readonly gapMs = 3_000,
  ) {}

  rayHead = (url: string, token?: string): RayHeadApi => {
    const real = new RayDashboardClient(url, token, {
      ...activityRetry,
      onRetry: (event) => {
        this.retries.push(event);
        activityRetry.onRetry?.(event);
      },
    });
    return {
      rayVersion: () => real.rayVersion(),
      nodes: () => real.nodes(),
      packageExists: (name) => real.packageExists(name),
      uploadPackage: (name, bytes) => real.uploadPackage(name, bytes),
      followJobLog: (id, node, onData, onEnd) => real.followJobLog(id, node, onData, onEnd),
      stopJob: (id) => real.stopJob(id),
      submitJob: async (id, entrypoint, env, pyModules, workingDir) => {
        if (id.endsWith('-train-0') && this.trainId === undefined) {
          this.trainId = id;
          await this.stall('train submit', id.slice(0, -'-train-0'.length));
        }
        const result = await real.submitJob(id, entrypoint, env, pyModules, workingDir);
        this.submits.push({ id, created: result.created });
        return result;
      },
      job: async (id) => {
        const first = this.stalls[0];
        if (
          id === this.trainId &&
          this.stalls.length === 1 &&
          first?.continuedAt !== undefined &&
          Date.now() - first.continuedAt >= this.gapMs
        )
          await this.stall('train polling', id.slice(0, -'-train-0'.length));
        return real.job(id);
      },
      jobLogs: async (id) => {
        if (id.endsWith('-validate-0')) {
          const listed = await requestJson<ListedJob[]>(`${url}/api/jobs/`, { token });
          this.jobsAtEnd = listed.filter((j) => j.type === 'SUBMISSION').map((j) => j.submission_id ?? '');
        }
        return real.jobLogs(id);
      },
    };
  };

  /** SIGSTOP the cluster's dashboard now; SIGCONT after stallMs (not awaited: the caller's request meets the stopped process). */
  private async stall(what: string, cluster: string): Promise<void> {
    const pid = await this.findDashboard(cluster);
    if (pid === undefined) throw new Error(`no dashboard process found for ${cluster}`);
    const record: Stall = { what, pid, stoppedAt: Date.now() };
    this.stalls.push(record);
    process.kill(pid, 'SIGSTOP');
    void sleep(this.stallMs).then(() => {
      process.kill(pid, 'SIGCONT');
      record.continuedAt = Date.now();
    });
  }

  /** For the test's report: retries by what was called. */
  summary(): string {
    const byCall = new Map<string, number>();
    for (const r of this.retries) byCall.set(r.what, (byCall.get(r.what) ?? 0) + 1);
    const stalls = this.stalls.map(
      (s) => `${s.what} ${(((s.continuedAt ?? NaN) - s.stoppedAt) / 1000).toFixed(1)} s`,
    );
    return `stalls: ${stalls.join(', ')}; ${this.retries.length} in-place retries (${[...byCall].map(([k, n]) => `${k} x${n}`).join(', ')})`;
  }
}
