import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import {
  checkpointSteps,
  hashCheckpoint,
  readTracker,
} from '../../src/activities/checkpoints/checkpoints.js';
import { LocalBackend } from '../../src/backends/local/local-backend.js';
import { freePorts } from '../../src/backends/local/ports.js';
import { clusterDir, readState } from '../../src/backends/local/state.js';
import { type DevServer, startDevServer } from '../../src/cli/dev-server.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import type { CampaignBudgets, CampaignProgress } from '../../src/domain/campaign/campaign.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { runCheckpointDir } from '../../src/domain/spec/paths.js';
import type { campaign } from '../../src/workflows/campaign.js';
import { testInput, testSpec } from './specs.js';

/**
 * The real stack for fault injection: a Temporal dev server with a database file (so it can be
 * stopped and started again), the orchestrator worker as its own process (so it can be killed with
 * SIGKILL and started again), a client, a Ray run root and storage of its own.
 */
export class FaultHarness {
  client!: Client;
  private connection!: Connection;
  private server?: DevServer;
  private worker?: ChildProcess;
  private workerStarts = 0;
  readonly taskQueue = `faults-${process.pid}`;
  readonly runRoot = `/tmp/ro-f-${process.pid}`;

  private constructor(
    readonly dir: string,
    private readonly port: number,
    private readonly uiPort: number,
  ) {}

  static async start(): Promise<FaultHarness> {
    const dir = await mkdtemp(join(tmpdir(), 'ragen-faults-'));
    const [port, uiPort] = (await freePorts(2)) as [number, number];
    const h = new FaultHarness(dir, port, uiPort);
    await h.startServer();
    h.connection = await Connection.connect({ address: h.address });
    h.client = new Client({ connection: h.connection });
    await h.startWorker();
    return h;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get storage(): string {
    return join(this.dir, 'storage');
  }

  /**
   * On the same ports and database each time (a restart, as an operator does one). A start that
   * exits at once is tried twice more: on a busy machine the old server's sockets or database may
   * not be released yet; the error then carries the server's log tail.
   */
  async startServer(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.server = await startDevServer({
          temporalBin: loadConfig().temporalBin,
          dbFile: join(this.dir, 't.db'),
          port: this.port,
          uiPort: this.uiPort,
          logFile: join(this.dir, 'temporal.log'),
        });
        return;
      } catch (err) {
        if (attempt >= 3 || !/exited with/.test((err as Error).message)) throw err;
        console.error(
          `fault harness: dev server start ${attempt} failed, trying again: ${(err as Error).message}`,
        );
        await sleep(2000);
      }
    }
  }

  async stopServer(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  /** `src/worker/worker.ts` as a child process; resolves once it polls the task queue. */
  async startWorker(): Promise<void> {
    this.workerStarts++;
    const logPath = join(this.dir, `worker-${this.workerStarts}.log`);
    const log = await open(logPath, 'a');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/worker.ts'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', log.fd, log.fd],
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: this.address,
        RAGEN_TASK_QUEUE: this.taskQueue,
        RAGEN_RUN_ROOT: this.runRoot,
        RAGEN_POLL_INTERVAL_MS: '1000',
        // The faults are timed by checkpoints the campaign has seen: every one is signalled.
        RAGEN_CHECKPOINT_SIGNAL_SECONDS: '0',
      },
    });
    await log.close();
    this.worker = child;
    const deadline = Date.now() + 180_000;
    while (!(await readFile(logPath, 'utf8')).includes('worker: polling task queue')) {
      if (child.exitCode !== null)
        throw new Error(`the worker exited with ${child.exitCode}; see ${logPath}`);
      if (Date.now() > deadline) throw new Error(`the worker did not start within 180 s; see ${logPath}`);
      await sleep(250);
    }
  }

  /** SIGKILL: no shutdown code runs, like a crashed host. */
  async killWorker(): Promise<void> {
    const child = this.worker;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async close(): Promise<void> {
    await this.killWorker();
    // A scenario that failed half-way leaves its local clusters running (the worker that would
    // tear them down is gone): stop them, so the next suite starts on a machine without Ray.
    const local = new LocalBackend({
      runRoot: this.runRoot,
      rayBin: loadConfig().rayBin,
      python: loadConfig().python,
      nodeIp: loadConfig().RAGEN_NODE_IP,
    });
    for (const c of await local.listClusters().catch(() => []))
      await local.deleteCluster(c.handle).catch(() => undefined);
    await this.connection?.close();
    await this.stopServer();
    if (!process.env['KEEP_RUN_ROOT']) {
      await rm(this.runRoot, { recursive: true, force: true });
      await rm(this.dir, { recursive: true, force: true });
    }
  }

  /** A small, quick campaign: few steps, checkpoints every 2, small validation. */
  spec(steps = 8, overrides: Record<string, string | number | boolean> = {}): ExperimentSpec {
    const spec = testSpec({}, this.storage);
    spec.trainer.totalTrainingSteps = steps;
    spec.trainer.saveFreq = 2;
    spec.trainer.overrides = {
      'trainer.val_before_train': false,
      'es_manager.val.env_groups': 8,
      ...overrides,
    };
    spec.validation.episodes = 16;
    // The file logger too: stepsLost reads every attempt's steps from <checkpoint dir>/metrics.jsonl.
    spec.trainer.loggers = ['console', 'file'];
    spec.deadlines = { joinSeconds: 120, runSeconds: 900, noProgressSeconds: 60, firstStepSeconds: 300 };
    return spec;
  }

  async startCampaign(
    id: string,
    spec: ExperimentSpec,
    budgets: Partial<CampaignBudgets> = {},
  ): Promise<WorkflowHandle<typeof campaign>> {
    const b: CampaignBudgets = {
      maxAttempts: 4,
      maxAttemptsWithoutNewCheckpoint: 2,
      historyEventsBeforeContinueAsNew: 2000,
      ...budgets,
    };
    return this.client.workflow.start<typeof campaign>('campaign', {
      taskQueue: this.taskQueue,
      workflowId: id,
      args: [{ spec, budgets: b, provenance: testInput().provenance }],
    });
  }

  checkpointDir(spec: ExperimentSpec, campaignId: string): string {
    return runCheckpointDir(spec.storage, spec.name, campaignId);
  }

  /** Poll the campaign's progress query until `predicate` holds. */
  async waitForProgress(
    handle: WorkflowHandle,
    predicate: (p: CampaignProgress) => boolean,
    what: string,
    timeoutMs = 300_000,
  ): Promise<CampaignProgress> {
    const deadline = Date.now() + timeoutMs;
    let last: CampaignProgress | undefined;
    while (Date.now() < deadline) {
      try {
        last = await handle.query<CampaignProgress>('progress');
        if (predicate(last)) return last;
      } catch {
        // the first workflow task may not have run yet, or the server is restarting
      }
      await sleep(300);
    }
    throw new Error(`timed out waiting for ${what}; last progress ${JSON.stringify(last)}`);
  }

  /** Clusters of the local backend whose owner is this workflow id, read as the backend reads them. */
  async clustersOf(
    workflowId: string,
  ): Promise<{ name: string; createdAt: string; pids: number[]; workerPids: number[] }[]> {
    const found = [];
    for (const name of await readdir(this.runRoot).catch(() => [] as string[])) {
      const state = await readState(clusterDir(this.runRoot, name)).catch(() => undefined); // half-written by a killed worker
      if (state?.owner.workflowId === workflowId) {
        found.push({
          name,
          createdAt: state.createdAt,
          pids: state.nodes.map((n) => n.pid),
          workerPids: state.nodes.filter((n) => n.role === 'worker').map((n) => n.pid),
        });
      }
    }
    return found;
  }
}

/** sha256 of every complete checkpoint (at or below the tracker) now, by step. */
export async function completedCheckpointHashes(checkpointDir: string): Promise<Map<number, string>> {
  const tracker = await readTracker(checkpointDir);
  const out = new Map<number, string>();
  for (const step of await checkpointSteps(checkpointDir)) {
    if (tracker !== undefined && step <= tracker)
      out.set(step, (await hashCheckpoint(checkpointDir, step)).sha256);
  }
  return out;
}
