import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { clusterProcesses } from '../../src/backends/local/processes.js';
import { STATE_FILE, clusterDir, writeState } from '../../src/backends/local/state.js';
import { loadConfig } from '../../src/config/config.js';
import type { ReaperReport } from '../../src/domain/cluster/reaper.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import type { reaper } from '../../src/workflows/reaper.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let storage: string;
const runRoot = `/tmp/ro-rp-${process.pid}`;

before(async () => {
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-reaper-'));
});
after(async () => {
  await env?.teardown();
  await rm(runRoot, { recursive: true, force: true });
});

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
  const taskQueue = uniqueId('reaper');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(activityDeps(config, env.client)),
  });
  return worker.runUntil(fn(taskQueue));
}

const reaperPass = (taskQueue: string, graceSeconds: number): Promise<ReaperReport> =>
  env.client.workflow.execute<typeof reaper>('reaper', {
    taskQueue,
    workflowId: uniqueId('reaper-pass'),
    args: [{ graceSeconds }],
  });

/** A cluster state written by the local backend's own writer, without processes (a stand-in for a leak). */
async function plantState(name: string, workflowId: string, createdAt: string): Promise<void> {
  const owner = { experiment: 'planted', workflowId, runId: 'r', attempt: 0 };
  await writeState(clusterDir(runRoot, name), {
    name,
    owner,
    createdAt,
    nodeIp: '127.0.0.2',
    gcsPort: 1,
    dashboardUrl: 'http://127.0.0.1:1',
    tempDir: join(runRoot, 'planted'),
    complete: true,
    nodes: [],
  });
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('reaper (real dev server, local backend)', () => {
  it('keeps clusters of running owners, deletes orphans, reports malformed ones', async () => {
    await withWorker(async (taskQueue) => {
      // An owner that runs: an experiment on a queue no worker serves stays RUNNING.
      const running = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue: uniqueId('unserved'),
        workflowId: uniqueId('owner'),
        args: [testInput()],
      });
      const old = new Date(Date.now() - 3_600_000).toISOString();
      await plantState('owned-by-running', running.workflowId, old);
      await plantState('orphan', 'no-such-workflow', old);
      await mkdir(join(runRoot, 'malformed'), { recursive: true });
      await writeFile(join(clusterDir(runRoot, 'malformed'), STATE_FILE), '{"name": "malformed"}');
      for (let pass = 0; pass < 3; pass++) {
        const report = await reaperPass(taskQueue, 60);
        const by = Object.fromEntries(report.entries.map((e) => [e.cluster, e]));
        assert.equal(by['owned-by-running']?.action, 'kept', JSON.stringify(report));
        assert.equal(by['malformed']?.action, 'reported');
        if (pass === 0) assert.equal(by['orphan']?.action, 'deleted');
        else assert.equal(by['orphan'], undefined, 'deleted clusters are gone from the listing');
      }
      assert.ok(await exists(join(clusterDir(runRoot, 'owned-by-running'), STATE_FILE)));
      assert.ok(
        await exists(join(clusterDir(runRoot, 'malformed'), STATE_FILE)),
        'a malformed cluster is reported, not deleted',
      );
      assert.ok(!(await exists(join(clusterDir(runRoot, 'orphan'), STATE_FILE))));
      await running.terminate('test done');
      await rm(join(runRoot, 'malformed'), { recursive: true });
      await rm(join(runRoot, 'owned-by-running'), { recursive: true });
    });
  });

  it('deletes the cluster of an experiment terminated during training', async () => {
    await withWorker(async (taskQueue) => {
      const spec = testSpec({}, storage);
      spec.trainer.totalTrainingSteps = 2000; // long enough to still be training when terminated
      spec.trainer.saveFreq = 500;
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('terminated'),
        args: [testInput(spec)],
      });
      for (
        let i = 0;
        i < 240 && (await handle.query<{ stage: string; lastStep: number }>('status')).lastStep < 1;
        i++
      )
        await sleep(500);
      const status = await handle.query<{ stage: string }>('status');
      assert.equal(status.stage, 'train');
      const terminatedAt = Date.now();
      await handle.terminate('stand-in for a person terminating the run');
      const report = await reaperPass(taskQueue, 0);
      const deleted = report.entries.find((e) => e.ownerWorkflowId === handle.workflowId);
      assert.equal(deleted?.action, 'deleted', JSON.stringify(report));
      assert.match(deleted?.reason ?? '', /terminated/);
      assert.deepEqual(await clusterProcesses(deleted?.cluster ?? ''), []);
      assert.deepEqual(await rayProcesses(), []);
      console.log(
        `reaper: terminate -> cluster gone in ${((Date.now() - terminatedAt) / 1000).toFixed(1)} s (pass ${report.durationMs} ms)`,
      );
    });
  });
});
