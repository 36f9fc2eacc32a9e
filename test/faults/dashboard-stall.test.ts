import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { clusterProcesses } from '../../src/backends/local/processes.js';
import { loadConfig } from '../../src/config/config.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { activityDeps } from '../../src/worker/worker.js';
import { DashboardStalls, dashboardPidAmong } from '../helpers/dashboard-stall.js';
import { activityAttempts } from '../helpers/history-attempts.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * A slow Ray dashboard never fails a run (local backend: real dev server, real Ray, real payload).
 * The head's dashboard process is stopped for 15 s (SIGSTOP, then SIGCONT) as the training job is
 * submitted, and again while training is polled: each request times out after 10 s and is retried
 * in place, the submit finds the job its timed-out POST made, and no activity attempt is lost.
 */
let env: TestWorkflowEnvironment;
let storage: string;
const runRoot = `/tmp/ro-stall-${process.pid}`;

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-stall-'));
});
after(async () => {
  await env?.teardown();
  await rm(runRoot, { recursive: true, force: true });
  await rm(storage, { recursive: true, force: true });
});

describe('Ray dashboard stalls (SIGSTOP 15 s) on the local backend', () => {
  /** One experiment on a fresh worker; `rayHead` from the stalls or the worker's own. */
  async function runExperiment(rayHead?: DashboardStalls['rayHead']) {
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const deps = activityDeps(config, env.client);
    const taskQueue = uniqueId('stall');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities({ ...deps, ...(rayHead ? { rayHead } : {}) }),
    });
    const workflowId = uniqueId('stall-wf');
    const started = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof experiment>('experiment', {
        taskQueue,
        workflowId,
        args: [testInput(testSpec({}, storage))],
      }),
    );
    return { result, workflowId, wallS: (Date.now() - started) / 1000 };
  }

  it('a stall during the training submit and one during training polling: the run succeeds, one driver per stage, no activity retried', async () => {
    // No stall-free run first for comparison (it took 25 s of CI): the run without stalls is
    // test/integration/experiment-local.test.ts; the stalls' own lengths are in the summary.
    const stalls = new DashboardStalls(async (cluster) => dashboardPidAmong(await clusterProcesses(cluster)));
    const { result, workflowId, wallS } = await runExperiment(stalls.rayHead);
    console.log(`[stall numbers] local: run ${wallS.toFixed(1)} s with two 15 s stalls; ${stalls.summary()}`);
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.training.finalStep, 20);

    assert.deepEqual(
      stalls.stalls.map((s) => s.what),
      ['train submit', 'train polling'],
    );
    assert.ok(
      stalls.retries.some((r) => r.what === 'POST /api/jobs/'),
      'the submit POST to the stopped dashboard timed out and was retried',
    );
    assert.ok(
      stalls.retries.some((r) => r.what.startsWith('GET /api/jobs/') && r.what.endsWith('-train-0')),
      'a poll of the training job timed out and was retried',
    );
    const cluster = stalls.submits[0]?.id.replace(/-[a-z]+-0$/, '') ?? '';
    assert.deepEqual(
      [...(stalls.jobsAtEnd ?? [])].sort(),
      ['checks', 'train', 'validate'].map((stage) => `${cluster}-${stage}-0`),
      'the cluster ran exactly one Ray job (one driver) per stage',
    );
    const attempts = await activityAttempts(env.client.workflow.getHandle(workflowId));
    for (const name of ['awaitJoin', 'allReduceCheck', 'train', 'validate'])
      assert.equal(
        attempts.get(name),
        1,
        `${name} ran once: the stall cost retries in place, not an attempt`,
      );
    assert.deepEqual(await rayProcesses(), [], 'teardown left Ray processes');
  });
});
