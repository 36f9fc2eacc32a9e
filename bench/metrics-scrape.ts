/**
 * Benchmark: the size and time of a scrape of the worker's /metrics after 1,000 finished
 * experiment workflows, on the real dev server with stand-in activities (every stage returns at
 * once). The product's metrics are labelled by workflow type, stage and outcome, never by workflow
 * id, so the size should not grow with the count: the bench measures it at 0, 100 and 1,000.
 * Run under the shared lock (it starts a dev server).
 *   flock /tmp/ray-tests.lock npx tsx bench/metrics-scrape.ts [count]
 */
import { Runtime, Worker } from '@temporalio/worker';
import { freePorts } from '../src/backends/local/ports.js';
import { experimentStart } from '../src/cli/start-options.js';
import { activityMetricsInterceptor } from '../src/metrics/activity-metrics-interceptor.js';
import { startMetricsServer } from '../src/metrics/metrics-server.js';
import { createProductMetrics } from '../src/metrics/product-metrics.js';
import { fakeActivities } from '../test/helpers/fake-activities.js';
import { testInput } from '../test/helpers/specs.js';
import { devServerEnv, workflowBundle } from '../test/helpers/temporal.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = ['bench/metrics-scrape.ts', 'src/metrics', 'test/helpers/fake-activities.ts'];

const total = Number(process.argv[2] ?? 1000);
const CONCURRENT = 50;
const SCRAPES = 20;

const [sdkPort] = (await freePorts(1)) as [number];
Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkPort}` } } } });
const env = await devServerEnv();
const metrics = createProductMetrics();
const taskQueue = 'bench-metrics-scrape';
const worker = await Worker.create({
  connection: env.nativeConnection,
  taskQueue,
  workflowBundle: await workflowBundle(),
  activities: fakeActivities().activities,
  interceptors: { activity: [activityMetricsInterceptor(metrics)] },
  maxConcurrentWorkflowTaskExecutions: 100,
});
const endpoint = await startMetricsServer({
  port: 0,
  host: '127.0.0.1',
  registry: metrics.registry,
  sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
  ready: () => worker.getState() === 'RUNNING',
});

/** SCRAPES scrapes: the body's size, the median and the slowest time. */
async function measure(finished: number) {
  const times: number[] = [];
  let bytes = 0;
  let series = 0;
  for (let i = 0; i < SCRAPES; i++) {
    const t0 = performance.now();
    const body = await (await fetch(`http://127.0.0.1:${endpoint.port}/metrics`)).text();
    times.push(performance.now() - t0);
    bytes = Buffer.byteLength(body);
    series = body.split('\n').filter((l) => l && !l.startsWith('#')).length;
  }
  times.sort((a, b) => a - b);
  const row = {
    finishedWorkflows: finished,
    bytes,
    series,
    medianMs: Number(times[Math.floor(SCRAPES / 2)]!.toFixed(2)),
    maxMs: Number(times[SCRAPES - 1]!.toFixed(2)),
  };
  console.log(JSON.stringify(row));
  return row;
}

const rows: Awaited<ReturnType<typeof measure>>[] = [];
const started = performance.now();
try {
  await worker.runUntil(async () => {
    rows.push(await measure(0));
    let done = 0;
    for (const checkpoint of [Math.min(100, total), total]) {
      while (done < checkpoint) {
        const batch = Math.min(CONCURRENT, checkpoint - done);
        await Promise.all(
          Array.from({ length: batch }, (_, i) => {
            const input = testInput();
            return env.client.workflow.execute('experiment', {
              taskQueue,
              workflowId: `bench-metrics-${done + i}`,
              args: [input],
              ...experimentStart(input.spec),
            });
          }),
        );
        done += batch;
      }
      rows.push(await measure(done));
    }
  });
} finally {
  endpoint.server.close();
  await env.teardown();
}
writeResults('metrics-scrape', measuredCode, {
  how: `real dev server, stand-in activities, ${CONCURRENT} workflows at a time; ${SCRAPES} scrapes of /metrics (product + SDK exposition) per row, over loopback`,
  workflowsSeconds: Number(((performance.now() - started) / 1000).toFixed(1)),
  rows,
});
