import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { startMetricsServer } from '../../src/metrics/metrics-server.js';
import { createProductMetrics } from '../../src/metrics/product-metrics.js';
import { observeActivityEnd } from '../../src/metrics/run-end-observer.js';
import { closedPort } from '../helpers/cli-process.js';

describe('the worker metrics endpoint', () => {
  it('RAGEN_METRICS_PORT: off by default, a port, or off; anything else names the variable', () => {
    const port = (v?: string) =>
      loadConfig({ RAGEN_METRICS_PORT: v } as NodeJS.ProcessEnv).RAGEN_METRICS_PORT;
    assert.equal(port(undefined), 'off');
    assert.equal(port('9100'), 9100);
    assert.equal(port('off'), 'off');
    assert.throws(() => port('on'), /RAGEN_METRICS_PORT must be a port number \(1-65535\) or off/);
  });

  it('serves the product metrics with a comment when the SDK exporter is down; readiness follows the worker', async () => {
    const metrics = createProductMetrics();
    metrics.activityOutcomes.inc({ workflow_type: 'experiment', stage: 'train', outcome: 'succeeded' });
    let ready = false;
    const { server, port } = await startMetricsServer({
      port: 0,
      host: '127.0.0.1',
      registry: metrics.registry,
      sdkMetricsUrl: `http://127.0.0.1:${await closedPort()}/metrics`,
      ready: () => ready,
    });
    try {
      const get = (p: string) => fetch(`http://127.0.0.1:${port}${p}`);
      const res = await get('/metrics');
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(
        text,
        /ragen_activity_outcomes_total\{workflow_type="experiment",stage="train",outcome="succeeded"\} 1/,
      );
      assert.match(text, /# temporal sdk metrics unavailable/);
      assert.equal((await get('/healthz')).status, 200);
      assert.equal((await get('/readyz')).status, 503);
      ready = true;
      assert.equal((await get('/readyz')).status, 200);
      assert.equal((await get('/other')).status, 404);
    } finally {
      server.close();
    }
  });
});

describe('run ends and reaper deletions, read from activity inputs and results', () => {
  it('counts runs by kind and outcome, GPU time from experiments only, deleted clusters only', async () => {
    const m = createProductMetrics();
    const gpuUsage = { gpus: 2, allocatedSeconds: 100, busySeconds: 60, allocatedGpuHours: 0.03 };
    observeActivityEnd(m, 'archive', [{ draft: { outcome: 'failed', gpuUsage } }], {});
    observeActivityEnd(m, 'archiveCampaign', [{ draft: { outcome: 'succeeded', gpuSeconds: 999 } }], {});
    observeActivityEnd(m, 'archiveSweep', [{ manifest: { outcome: 'cancelled' } }], {});
    observeActivityEnd(m, 'reapClusters', [{}], {
      entries: [{ action: 'deleted' }, { action: 'kept' }, { action: 'deleted' }],
    });
    observeActivityEnd(m, 'train', [{ draft: { outcome: 'succeeded' } }], {});
    const text = await m.registry.metrics();
    assert.match(text, /ragen_runs_finished_total\{kind="experiment",outcome="failed"\} 1/);
    assert.match(text, /ragen_runs_finished_total\{kind="campaign",outcome="succeeded"\} 1/);
    assert.match(text, /ragen_runs_finished_total\{kind="sweep",outcome="cancelled"\} 1/);
    assert.doesNotMatch(text, /outcome="succeeded"\} 2|kind="experiment",outcome="succeeded"/);
    assert.match(text, /ragen_gpu_seconds_allocated_total 100\n/);
    assert.match(text, /ragen_gpu_seconds_busy_total 60\n/);
    assert.match(text, /ragen_reaper_deletions_total 2\n/);
  });
});
