import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { loadConfig } from '../../src/config/config.js';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { SweepManifestSchema } from '../../src/domain/sweep/sweep.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { rayProcesses } from '../helpers/processes.js';
import { testSpec } from '../helpers/specs.js';
import { sweepInput } from '../helpers/sweeps.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let storage: string;
const runRoot = `/tmp/ro-sw-${process.pid}`;

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-sweep-'));
});
after(async () => {
  await env?.teardown();
  await rm(runRoot, { recursive: true, force: true });
});

describe('sweep on the real dev server, real Ray, real payload (local backend)', () => {
  it('runs two real experiments one at a time, ranks them by real validation success and archives sweep.json + sweep.csv', async () => {
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('it-sweep');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(activityDeps(config, env.client)),
    });
    const base = testSpec({}, storage);
    base.trainer.saveFreq = 2;
    base.validation.episodes = 16;
    const spec = parseSweepMapping(
      {
        name: 'steps-sweep',
        base,
        parameters: { grid: { 'trainer.totalTrainingSteps': [2, 6] } },
        concurrency: 1,
      },
      'test',
    );
    const started = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof sweep>('sweep', {
        taskQueue,
        workflowId: uniqueId('it-sweep-wf'),
        args: [sweepInput(spec)],
      }),
    );
    console.log(
      `real 2-child sweep: ${((Date.now() - started) / 1000).toFixed(1)} s; ranked ${result.ranked.map((r) => `#${r.index} ${r.successRate}`).join(', ')}`,
    );
    assert.equal(result.succeeded, 2, JSON.stringify(result, null, 2));
    assert.equal(result.maxRunning, 1);
    const rates = result.ranked.map((r) => r.successRate ?? NaN);
    assert.deepEqual(
      rates,
      [...rates].sort((a, b) => b - a),
      'best first',
    );
    for (const row of result.ranked) {
      // The ranked value is the one the child's own manifest records.
      const manifest = ManifestSchema.parse(JSON.parse(await readFile(row.manifestPath ?? '', 'utf8')));
      assert.equal(manifest.validation.result?.success_rate, row.successRate);
      assert.equal(manifest.training.finalStep, row.params['trainer.totalTrainingSteps']);
      assert.equal(manifest.temporal.workflowId, row.workflowId);
    }
    const archived = SweepManifestSchema.parse(JSON.parse(await readFile(result.manifestPath ?? '', 'utf8')));
    assert.deepEqual(archived.children, result.ranked);
    const csv = (await readFile(result.csvPath ?? '', 'utf8')).trim().split('\n');
    assert.equal(csv.length, 3);
    assert.match(
      csv[1] ?? '',
      new RegExp(`^1,${result.ranked[0]?.index},succeeded,${result.ranked[0]?.successRate},`),
    );
    assert.deepEqual(await rayProcesses(), [], 'every child tore its cluster down');
  });
});
