/**
 * Benchmark: the production topology's server (Temporal v1.32.2 on PostgreSQL, built by
 * scripts/temporal/build.sh) with 1, 2 and 4 worker processes. Each round starts N experiment
 * workflows (the real workflow code) on fake activities (stand-ins for Ray: every stage returns at
 * once) and prints workflows/s and the p50/p99 schedule-to-start latency of activity and workflow
 * tasks, read from the histories. The shape of scaling on this machine, not a capacity figure.
 *   flock /tmp/ray-test.lock npx tsx bench/server-throughput.ts [N=40] [workerCounts=1,2,4]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { REPO_ROOT } from '../src/config/config.js';
import type { experiment } from '../src/workflows/experiment.js';
import { testInput, testSpec } from '../test/helpers/specs.js';
import { startPostgresTemporal } from '../test/helpers/temporal-postgres.js';
import { workflowBundle } from '../test/helpers/temporal.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/server-throughput.ts',
  'src/workflows',
  'src/worker/worker.ts',
  'scripts/temporal/versions.sh',
];

const EventType = proto.temporal.api.enums.v1.EventType;
const n = Number(process.argv[2] ?? 40);
const workerCounts = (process.argv[3] ?? '1,2,4').split(',').map(Number);

type Event = proto.temporal.api.history.v1.IHistoryEvent;
const ms = (e: Event | undefined) =>
  Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** Schedule-to-start of every activity and workflow task in one history, in ms. */
function scheduleToStart(events: Event[]): { activity: number[]; workflowTask: number[] } {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const activity: number[] = [];
  const workflowTask: number[] = [];
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const scheduled = byId.get(Number(e.activityTaskStartedEventAttributes?.scheduledEventId));
      // A retried activity's started event is written at completion: only first attempts count.
      if (scheduled && (e.activityTaskStartedEventAttributes?.attempt ?? 1) === 1)
        activity.push(ms(e) - ms(scheduled));
    }
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      const scheduled = byId.get(Number(e.workflowTaskStartedEventAttributes?.scheduledEventId));
      if (scheduled) workflowTask.push(ms(e) - ms(scheduled));
    }
  }
  return { activity, workflowTask };
}

async function startWorker(address: string, taskQueue: string, bundlePath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/standins/fake-activity-worker.ts'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      BENCH_TASK_QUEUE: taskQueue,
      BENCH_WORKFLOW_BUNDLE: bundlePath,
    },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  while (!out.includes('polling')) {
    if (child.exitCode !== null) throw new Error(`fake-activity worker exited with ${child.exitCode}`);
    await sleep(200);
  }
  return child;
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = once(c, 'exit');
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

const dir = await mkdtemp(join(tmpdir(), 'ragen-bench-throughput-'));
const env = await startPostgresTemporal();
const connection = await Connection.connect({ address: env.address });
const client = new Client({ connection, namespace: env.namespace });
const rows: string[] = [];
const rounds: object[] = [];
try {
  const bundlePath = join(dir, 'workflow-bundle.js');
  await writeFile(bundlePath, (await workflowBundle()).code);
  for (const workers of workerCounts) {
    const taskQueue = `bench-throughput-${workers}-${process.pid}`;
    const children = await Promise.all(
      Array.from({ length: workers }, () => startWorker(env.address, taskQueue, bundlePath)),
    );
    try {
      const started = performance.now();
      const ids = Array.from({ length: n }, (_, i) => `bench-tp-${workers}w-${process.pid}-${i}`);
      const handles = await Promise.all(
        ids.map((workflowId) =>
          client.workflow.start<typeof experiment>('experiment', {
            taskQueue,
            workflowId,
            args: [testInput(testSpec())],
          }),
        ),
      );
      await Promise.all(handles.map((h) => h.result()));
      const seconds = (performance.now() - started) / 1000;
      const latency = { activity: [] as number[], workflowTask: [] as number[] };
      for (const h of handles) {
        const s = scheduleToStart((await h.fetchHistory()).events ?? []);
        latency.activity.push(...s.activity);
        latency.workflowTask.push(...s.workflowTask);
      }
      const row = `| ${workers} | ${n} | ${seconds.toFixed(1)} | ${(n / seconds).toFixed(2)} | ${percentile(latency.activity, 50).toFixed(0)} / ${percentile(latency.activity, 99).toFixed(0)} | ${percentile(latency.workflowTask, 50).toFixed(0)} / ${percentile(latency.workflowTask, 99).toFixed(0)} |`;
      rows.push(row);
      rounds.push({
        workers,
        workflows: n,
        wallSeconds: seconds,
        workflowsPerSecond: n / seconds,
        activityScheduleToStartMs: {
          p50: percentile(latency.activity, 50),
          p99: percentile(latency.activity, 99),
        },
        workflowTaskScheduleToStartMs: {
          p50: percentile(latency.workflowTask, 50),
          p99: percentile(latency.workflowTask, 99),
        },
      });
      console.log(row);
    } finally {
      await stopWorkers(children);
    }
  }
  console.log(
    `\nTemporal server on PostgreSQL, ${n} experiments per round (fake activities), worker processes on this machine (${(await import('node:os')).cpus().length} cores)`,
  );
  console.log(
    '| workers | workflows | wall s | workflows/s | activity schedule-to-start p50 / p99 ms | workflow task p50 / p99 ms |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  // Why activities show ~0 ms: the SDK asks for eager activities when it completes a workflow task
  // on the task queue it also polls, so the server hands the activity back in that same reply.
  console.log(
    'Activity schedule-to-start is ~0 ms: eager activity dispatch (the completing worker gets the activity in the reply); the queueing shows in workflow tasks.',
  );
  writeResults('server-throughput', measuredCode, {
    server: 'Temporal on PostgreSQL (fake activities)',
    rounds,
  });
} finally {
  await connection.close();
  await env.stop();
  await rm(dir, { recursive: true, force: true });
}
