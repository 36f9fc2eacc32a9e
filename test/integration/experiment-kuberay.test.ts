import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { loadConfig } from '../../src/config.js';
import type { ExperimentSpec } from '../../src/domain/experiment.js';
import { activityDeps } from '../../src/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import type { reaper } from '../../src/workflows/reaper.js';
import { type KubeEnv, startKubeEnv } from '../helpers/kube-env.js';
import { KubeRayStandIn } from '../helpers/kuberay-standin.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { pushImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { RAY_VERSION_LABEL } from '../../src/registry/ray-version.js';
import { clusterProcesses } from '../../src/backends/local/processes.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * Whole experiments on the kuberay backend: real Temporal dev server, real kube-apiserver, real
 * Ray behind the KubeRay STAND-IN (test/helpers/kuberay-standin.ts: no container runtime here).
 * Run under `flock /tmp/ray-test.lock`: the leak checks see every Ray process on the machine.
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
let standIn: KubeRayStandIn;
let backend: KubeRayBackend;
let storage: string;
/** A real Distribution registry on loopback holding the image the specs name: verify reads it. */
let registry: RunningRegistry;
let image = '';
let releaseWorkers: () => void = () => undefined;
let workersHeld: Promise<void> = Promise.resolve();
const runRoot = `/tmp/ro-k-${process.pid}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  kube = await startKubeEnv();
  console.log(`# kube env warm start: ${(kube.startMs / 1000).toFixed(1)} s`);
  env = await devServerEnv();
  registry = await startRegistry();
  const pushed = await pushImage({ baseUrl: registry.baseUrl, repository: 'ragen/sokoban' }, { labels: { [RAY_VERSION_LABEL]: '2.60.0' } }, '2.60.0');
  image = `${registry.host}/ragen/sokoban:2.60.0@${pushed}`;
  storage = await mkdtemp(join(tmpdir(), 'ragen-kuberay-'));
  const config = loadConfig();
  standIn = new KubeRayStandIn({ kc: kube.admin, namespace: kube.namespace, runRoot, rayBin: config.rayBin, nodeIp: config.RAGEN_NODE_IP, holdWorkers: () => workersHeld });
  standIn.start();
  backend = new KubeRayBackend({ namespace: kube.namespace, kubeconfig: kube.adminKubeconfig, dashboard: 'head-status', python: config.python, pollMs: 500 });
});
after(async () => {
  backend?.close();
  await standIn?.stop();
  await env?.teardown();
  await registry?.stop();
  await kube?.stop();
  await rm(runRoot, { recursive: true, force: true });
});

function spec(steps: number, saveFreq: number): ExperimentSpec {
  const s = kuberaySpec(storage, kube.pvc);
  // The stand-in starts Ray node by node; on a loaded 2-core CI machine that can pass the shared 60 s.
  return { ...s, image, deadlines: { ...s.deadlines, joinSeconds: 150 }, trainer: { ...s.trainer, totalTrainingSteps: steps, saveFreq } };
}

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
  const taskQueue = uniqueId('kuberay');
  const deps = { ...activityDeps(config, env.client), backends: { kuberay: backend } };
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: createActivities(deps) });
  return worker.runUntil(fn(taskQueue));
}

type Handle = Awaited<ReturnType<typeof env.client.workflow.start<typeof experiment>>>;
async function waitForStage(handle: Handle, want: (s: { stage: string; lastStep: number }) => boolean, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await handle.query<{ stage: string; lastStep: number }>('status');
    if (want(status)) return;
    const { status: run } = await handle.describe();
    if (run.name !== 'RUNNING') throw new Error(`the workflow closed (${run.name}) before the stage was reached: ${JSON.stringify(status)}`);
    await sleep(300);
  }
  throw new Error('stage not reached in time');
}

/** The attempt of the last run of an activity type, from the history (a retried activity shows > 1). */
async function lastAttempt(handle: Handle, activityType: string): Promise<number> {
  const history = await handle.fetchHistory();
  const scheduled = new Set((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType).map((e) => Number(e.eventId)));
  const started = (history.events ?? []).filter((e) => scheduled.has(Number(e.activityTaskStartedEventAttributes?.scheduledEventId)));
  return Math.max(0, ...started.map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0));
}

async function assertClean(): Promise<void> {
  const left = await backend.api.listRayClusters('app.kubernetes.io/managed-by=ragen-orchestrator');
  assert.deepEqual(left.map((c) => c.metadata.name), [], 'no RayCluster is left');
  for (const name of standIn.launched) assert.deepEqual(await clusterProcesses(name), [], `no Ray process of ${name} is left`);
  assert.deepEqual(standIn.errors, []);
}

describe('experiment on kuberay (real kube-apiserver, KubeRay stand-in, real Ray)', () => {
  it('runs every stage and ends with the RayCluster deleted; counts Kubernetes API requests', async () => {
    const launchedBefore = standIn.launched.length;
    const samples: { stage: string; at: number; requests: number }[] = [];
    const result = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', { taskQueue, workflowId: uniqueId('k-wf'), args: [testInput(spec(20, 10))] });
      let done = false;
      const sampler = (async () => {
        while (!done) {
          const s = await handle.query<{ stage: string }>('status').catch(() => undefined);
          if (s && samples.at(-1)?.stage !== s.stage) samples.push({ stage: s.stage, at: Date.now(), requests: backend.api.requests });
          await sleep(250);
        }
      })();
      const r = await handle.result();
      done = true;
      await sampler;
      samples.push({ stage: 'end', at: Date.now(), requests: backend.api.requests });
      return r;
    });
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.training.finalStep, 20);
    assert.equal(result.teardown.outcome, 'succeeded');
    const manifest = JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')) as { image: { ref?: string; verified: boolean; rayVersion?: string; note: string } };
    assert.equal(manifest.image.ref, image);
    assert.equal(manifest.image.verified, true, manifest.image.note);
    assert.equal(manifest.image.rayVersion, '2.60.0');
    assert.equal(standIn.launched.length - launchedBefore, 1, 'one RayCluster for one run');
    await assertClean();
    const from = samples.find((s) => s.stage === 'join');
    const to = samples.find((s) => s.stage === 'validate');
    if (from && to) {
      const minutes = (to.at - from.at) / 60_000;
      console.log(`# kube API requests while waiting and training: ${to.requests - from.requests} in ${(minutes * 60).toFixed(0)} s = ${((to.requests - from.requests) / minutes).toFixed(1)}/min`);
      assert.ok((to.requests - from.requests) / Math.max(minutes, 1) <= 12, 'at most 12 requests a minute while waiting and training');
    }
    console.log(`# stages: ${samples.map((s) => `${s.stage}@${s.requests}`).join(' ')}`);
  });

  it('kube-apiserver restarted during join: the join activity retries and the run completes', async () => {
    workersHeld = new Promise((r) => (releaseWorkers = r));
    const result = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', { taskQueue, workflowId: uniqueId('k-restart'), args: [testInput(spec(10, 10))] });
      await waitForStage(handle, (s) => s.stage === 'join');
      await sleep(2000); // the join activity is polling the watched RayCluster
      await kube.restartApiServer(3000);
      releaseWorkers();
      const r = await handle.result();
      assert.ok((await lastAttempt(handle, 'awaitJoin')) > 1, 'the join activity failed while the API server was down and was retried');
      return r;
    });
    workersHeld = Promise.resolve();
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.teardown.outcome, 'succeeded');
    await assertClean();
  });

  it('the RayCluster deleted by someone else during training: ClusterLost reported, no re-create, teardown clean', async () => {
    const launchedBefore = standIn.launched.length;
    const outcome = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', { taskQueue, workflowId: uniqueId('k-deleted'), args: [testInput(spec(400, 100))] });
      await waitForStage(handle, (s) => s.stage === 'train' && s.lastStep >= 1);
      const name = standIn.launched.at(-1) ?? '';
      await backend.api.deleteRayCluster(name); // "someone else": straight through the API
      return handle.result().then(
        () => assert.fail('the run succeeded without its cluster'),
        (err: { cause?: { type?: string; message?: string; details?: unknown[] } }) => err.cause,
      );
    });
    assert.equal(outcome?.type, 'ClusterLost', JSON.stringify(outcome));
    assert.match(outcome?.message ?? '', /deleted|being deleted/);
    assert.match(outcome?.message ?? '', /outside this workflow/);
    const result = outcome?.details?.[0] as { training: { outcome: string }; teardown: { outcome: string }; submits: number };
    assert.equal(result.training.outcome, 'failed');
    assert.equal(result.teardown.outcome, 'succeeded');
    assert.equal(result.submits, 1, 'no resubmit after training started');
    await sleep(2000);
    assert.equal(standIn.launched.length - launchedBefore, 1, 'no re-create loop');
    await assertClean();
  });

  it('reaper on kuberay: an experiment terminated during training has its RayCluster deleted by the next pass', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', { taskQueue, workflowId: uniqueId('k-terminated'), args: [testInput(spec(400, 100))] });
      await waitForStage(handle, (s) => s.stage === 'train' && s.lastStep >= 1);
      const name = standIn.launched.at(-1) ?? '';
      await handle.terminate('test: terminate skips every cleanup in the workflow');
      const terminatedAt = Date.now();
      assert.ok(await backend.api.getRayCluster(name), 'terminate ran no teardown: the cluster is still there');
      const report = await env.client.workflow.execute<typeof reaper>('reaper', { taskQueue, workflowId: uniqueId('reaper-pass'), args: [{ graceSeconds: 0 }] });
      const entry = report.entries.find((e) => e.cluster === name);
      assert.equal(entry?.action, 'deleted', JSON.stringify(report));
      assert.match(entry?.reason ?? '', /terminated/);
      assert.equal(await backend.api.getRayCluster(name), undefined);
      console.log(`# kuberay: terminate -> RayCluster and its Ray processes gone (one reaper pass, grace 0): ${((Date.now() - terminatedAt) / 1000).toFixed(1)} s`);
    });
    await assertClean();
  });
});
