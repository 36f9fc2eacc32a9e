import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Server } from 'node:http';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, Worker } from '@temporalio/worker';
import { REPO_ROOT } from '../../src/config/config.js';
import { activityMetricsInterceptor } from '../../src/metrics/activity-metrics-interceptor.js';
import { registerClustersAlive } from '../../src/metrics/clusters-alive.js';
import { createBackends } from '../../src/backends/registry.js';
import { loadConfig } from '../../src/config/config.js';
import { startMetricsServer } from '../../src/metrics/metrics-server.js';
import { createProductMetrics } from '../../src/metrics/product-metrics.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { freePorts } from '../../src/backends/local/ports.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

class StandInTransientError extends Error {
  override name = 'StandInTransientError';
}

/** Sum of the samples of a metric whose labels include all of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/**
 * The worker's operator endpoint during a real run: the real dev server, the SDK's runtime exporter,
 * the product's metrics recorded by the activity interceptor; stand-in activities (no Ray: what is
 * under test is the recording and the endpoint, not training).
 */
describe('worker metrics, health and the Grafana dashboard (real dev server, stand-in activities)', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let endpoint: { server: Server; port: number };
  const taskQueue = uniqueId('tq-metrics');
  let preflightCalls = 0;
  /** The scrape after the run, read by the dashboard test. */
  let scrape = '';

  before(async () => {
    const [sdkPort] = (await freePorts(1)) as [number];
    Runtime.install({
      telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkPort}` } } },
    });
    env = await devServerEnv();
    const metrics = createProductMetrics();
    // The real local backend's listing (clusters under the run root), as the worker registers it.
    registerClustersAlive(metrics.registry, createBackends(loadConfig()));
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      // Preflight fails once (a retryable error, as a dashboard that is not up yet): a failure and a retry to count.
      activities: fakeActivities({
        preflight: async () => {
          if (++preflightCalls === 1) throw new StandInTransientError('stand-in: dashboard not up yet');
          return { checks: [{ name: 'fake', ok: true, detail: 'stand-in' }] };
        },
      }).activities,
      interceptors: { activity: [activityMetricsInterceptor(metrics)] },
    });
    endpoint = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      registry: metrics.registry,
      sdkMetricsUrl: `http://127.0.0.1:${sdkPort}/metrics`,
      ready: () => worker.getState() === 'RUNNING',
    });
  });
  after(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    endpoint?.server.close();
    await env?.teardown();
  });

  const get = (path: string) => fetch(`http://127.0.0.1:${endpoint.port}${path}`);

  it('/healthz answers; /readyz is 503 until the worker polls, then 200', async () => {
    assert.equal((await get('/healthz')).status, 200);
    assert.equal((await get('/readyz')).status, 503);
    running = worker.run();
    for (let i = 0; i < 50 && (await get('/readyz')).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal((await get('/readyz')).status, 200);
  });

  it('a run moves the stage histogram and the outcome counters; the SDK metrics come on the same scrape', async () => {
    const before = await (await get('/metrics')).text();
    const spec = testSpec();
    await env.client.workflow.execute<typeof experiment>('experiment', {
      taskQueue,
      workflowId: uniqueId('metrics-exp'),
      args: [testInput(spec)],
    });
    const text = await (await get('/metrics')).text();
    const trainCount = { workflow_type: 'experiment', stage: 'train', outcome: 'succeeded' };
    assert.equal(sample(before, 'ragen_stage_duration_seconds_count', trainCount), 0);
    assert.equal(sample(text, 'ragen_stage_duration_seconds_count', trainCount), 1, text);
    assert.ok(sample(text, 'ragen_stage_duration_seconds_bucket', { ...trainCount, le: '+Inf' }) === 1);
    assert.ok(
      sample(text, 'ragen_activity_outcomes_total', { stage: 'preflight', outcome: 'succeeded' }) >= 1,
    );
    assert.equal(
      sample(text, 'ragen_activity_failures_total', {
        stage: 'preflight',
        error_type: 'StandInTransientError',
      }),
      1,
    );
    const retried = { stage: 'preflight', error_type: 'StandInTransientError' };
    assert.equal(sample(text, 'ragen_activity_retries_total', retried), 1);
    assert.equal(sample(before, 'ragen_runs_started', { kind: 'experiment' }), 0);
    assert.equal(
      sample(text, 'ragen_runs_started', { kind: 'experiment' }),
      1,
      'counted by the workflow interceptor',
    );
    assert.match(text, /^ragen_clusters_alive\{backend="local"\} \d+$/m);
    assert.equal(
      sample(before, 'ragen_runs_finished_total', { kind: 'experiment', outcome: 'succeeded' }),
      0,
    );
    assert.equal(sample(text, 'ragen_runs_finished_total', { kind: 'experiment', outcome: 'succeeded' }), 1);
    assert.ok(sample(text, 'ragen_gpu_seconds_allocated_total') >= 0);
    assert.ok(sample(text, 'temporal_workflow_completed') >= 1, 'the SDK counts the completed workflow');
    scrape = text;
  });

  it('every metric the Grafana dashboard queries is one the scrape returned', async () => {
    const dashboard = JSON.parse(
      await readFile(join(REPO_ROOT, 'deploy/grafana/ragen-orchestrator.json'), 'utf8'),
    ) as { panels: { title: string; targets: { expr: string }[] }[] };
    const scraped = new Set(
      scrape
        .split('\n')
        .map((l) => /^([a-zA-Z_:][\w:]*)[{ ]/.exec(l)?.[1])
        .filter((n): n is string => n !== undefined),
    );
    const queried = dashboard.panels.flatMap((p) =>
      p.targets.flatMap((t) =>
        [...t.expr.matchAll(/\b((?:ragen|temporal)_[a-z_]+)\b/g)].map((m) => [p.title, m[1]!]),
      ),
    );
    assert.ok(queried.length >= dashboard.panels.length);
    for (const [title, name] of queried)
      assert.ok(scraped.has(name!), `panel '${title}' queries ${name}, not in the scrape`);
  });
});
