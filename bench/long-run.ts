/**
 * Bench (issue 16 item 4): the train activity stays flat as a run grows. It runs the real train
 * activity (MockActivityEnvironment) against a stand-in Ray head (bench/standins/ray-head-server.ts,
 * its own process, real HTTP) whose job prints 1,000,000 console lines over the run, and prints
 * per-poll CPU time of this process and bytes read at the start and at the end.
 *   npx tsx bench/long-run.ts [lines] [seconds]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createTrain, type TrainResult } from '../src/activities/train/train.js';
import { RayDashboardClient, type RayHeadApi } from '../src/backends/ray/dashboard-client.js';
import type { ClusterHandle } from '../src/domain/cluster/cluster.js';
import { fakeBackend, readyCluster } from '../test/helpers/fake-ray-head.js';
import { testSpec } from '../test/helpers/specs.js';

const lines = Number(process.argv[2] ?? 1_000_000);
const seconds = Number(process.argv[3] ?? 120);
const linesPerStep = 1000;
const dir = await mkdtemp(join(tmpdir(), 'long-run-'));
const checkpointDir = join(dir, 'ckpt');
const { mkdir } = await import('node:fs/promises');
await mkdir(checkpointDir, { recursive: true });

const head = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    join(import.meta.dirname, 'standins', 'ray-head-server.ts'),
    String(lines),
    String(seconds),
    String(linesPerStep),
    checkpointDir,
    join(dir, 'job-driver.log'),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise<number>((resolve) => {
  createInterface({ input: head.stdout! }).on('line', (l) => {
    const m = /^listening (\d+)/.exec(l);
    if (m) resolve(Number(m[1]));
  });
});

interface Poll {
  cpuMs: number;
  bytes: number;
}
const polls: Poll[] = [];
let followed = 0;
let lastCpu = process.cpuUsage();
const real = new RayDashboardClient(`http://127.0.0.1:${port}`);
// Measures around the real client: one job() call per poll. A Proxy with bound methods, since the
// client keeps its token in a private field that a prototype copy cannot read.
const wrapped: Partial<RayHeadApi> = {
  job: async (id: string) => {
    const cpu = process.cpuUsage(lastCpu);
    lastCpu = process.cpuUsage();
    polls.push({ cpuMs: (cpu.user + cpu.system) / 1000, bytes: followed });
    followed = 0;
    return real.job(id);
  },
  followJobLog: (id: string, node: string, onData: (c: Buffer) => void, onEnd: (e?: Error) => void) =>
    real.followJobLog(id, node, (c) => ((followed += c.length), onData(c)), onEnd),
};
const measured: RayHeadApi = new Proxy(real, {
  get: (target, prop) => {
    if (prop in wrapped) return wrapped[prop as keyof RayHeadApi];
    const value: unknown = Reflect.get(target, prop);
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  },
});

const spec = testSpec({}, dir);
spec.trainer.totalTrainingSteps = Math.floor(lines / linesPerStep);
const handle: ClusterHandle = {
  backend: 'local',
  name: 'long-run-a0',
  dashboardUrl: real.baseUrl,
  owner: { experiment: 'e', workflowId: 'long-run', runId: 'r', attempt: 0 },
};
const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'long-run', runId: 'r' } });
const t0 = Date.now();
try {
  const result = (await env.run(
    createTrain({
      backends: { local: fakeBackend(() => readyCluster(2, 2)) },
      rayHead: () => measured,
      reportProgress: async () => undefined,
      workflowStatus: async () => undefined,
      pollIntervalMs: 1000,
    }),
    { spec, handle, checkpointDir, resume: { mode: 'disable' as const } },
  )) as TrainResult;
  const active = polls.slice(1).filter((p) => p.bytes > 0);
  const k = Math.max(3, Math.floor(active.length / 10));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const show = (p: Poll) =>
    `  cpu ${p.cpuMs.toFixed(1).padStart(6)} ms  read ${(p.bytes / 1e3).toFixed(0).padStart(6)} kB`;
  console.log(
    `train activity: ${lines} console lines, ${result.finalStep} steps, ${polls.length} polls in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  console.log('first polls:');
  for (const p of active.slice(0, 5)) console.log(show(p));
  console.log('last polls:');
  for (const p of active.slice(-5)) console.log(show(p));
  const [c1, c2] = [
    median(active.slice(0, k).map((p) => p.cpuMs)),
    median(active.slice(-k).map((p) => p.cpuMs)),
  ];
  const [b1, b2] = [
    median(active.slice(0, k).map((p) => p.bytes)),
    median(active.slice(-k).map((p) => p.bytes)),
  ];
  console.log(
    `median of the first and last ${k} polls: CPU ${c1.toFixed(1)} -> ${c2.toFixed(1)} ms (x${(c2 / c1).toFixed(2)}), bytes read ${(b1 / 1e3).toFixed(0)} -> ${(b2 / 1e3).toFixed(0)} kB (x${(b2 / b1).toFixed(2)})`,
  );
} finally {
  head.kill();
  await rm(dir, { recursive: true, force: true });
}
