import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import type { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { loadConfig } from '../../src/config/config.js';
import type { CampaignProgress, CampaignResult } from '../../src/domain/campaign/campaign.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { ExperimentStatus } from '../../src/domain/run/experiment-input.js';
import { clusterName } from '../../src/domain/spec/naming.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { campaign } from '../../src/workflows/campaign.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { type KubeEnv, adminBackend, startKubeEnv } from '../helpers/kube-env.js';
import { type RunningKueue, gpuQueueObjects, startKueue } from '../helpers/kueue.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { pushSokobanImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * Queueing and preemption with the real Kueue v0.17.0 (test/helpers/kueue.ts) in front of the real
 * KubeRay operator, on the real kube-apiserver; Ray in the stand-in kubelet's Pods, the toy payload
 * training. One ClusterQueue of 2 nvidia.com/gpu that preempts lower priorities within itself, one
 * LocalQueue `ragen`, one WorkloadPriorityClass `urgent`. Every experiment here takes 2 GPUs, so
 * one runs at a time. No timing is asserted beyond order: the numbers are printed.
 * Run under `flock /tmp/ray-test.lock`.
 */
let kube: KubeEnv;
let kueue: RunningKueue;
let env: TestWorkflowEnvironment;
let backend: KubeRayBackend;
let registry: RunningRegistry;
let image = '';
const QUEUE = 'ragen';
const URGENT = 'urgent';

/** When each RayCluster was first seen, admitted (spec.suspend false) and suspended again, polled every 100 ms. */
interface ClusterTimes {
  seen: number;
  admitted?: number;
  suspendedAgain?: number;
  gone?: number;
}
const clusterTimes = new Map<string, ClusterTimes>();
let watching = true;
let watcher: Promise<void> | undefined;

async function watchClusters(): Promise<void> {
  const custom = kube.admin.makeApiClient(CustomObjectsApi);
  while (watching) {
    const list = (await custom
      .listNamespacedCustomObject({
        group: 'ray.io',
        version: 'v1',
        namespace: kube.namespace,
        plural: 'rayclusters',
      })
      .catch(() => undefined)) as
      | { items: { metadata: { name: string; deletionTimestamp?: string }; spec: { suspend?: boolean } }[] }
      | undefined;
    if (list) {
      const now = Date.now();
      const names = new Set<string>();
      for (const rc of list.items) {
        const name = rc.metadata.name;
        names.add(name);
        const t = clusterTimes.get(name) ?? { seen: now };
        clusterTimes.set(name, t);
        if (rc.spec.suspend !== true && t.admitted === undefined) t.admitted = now;
        if (rc.spec.suspend === true && t.admitted !== undefined && t.suspendedAgain === undefined)
          t.suspendedAgain = now;
        if (rc.metadata.deletionTimestamp && t.gone === undefined) t.gone = now;
      }
      for (const [name, t] of clusterTimes) if (!names.has(name) && t.gone === undefined) t.gone = now;
    }
    await sleep(100);
  }
}

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  // Two nodes of 2 GPUs: the quota (2), not the nodes, is what makes the experiments wait.
  kube = await startKubeEnv({ gpus: 2, extraNodes: 1, namespace: 'ragen-kueue' });
  kueue = await startKueue(kube.admin, kube.adminKubeconfig);
  console.log(
    `# Kueue ready (webhooks answering through the apiserver) ${(kueue.readyMs / 1000).toFixed(1)} s after its start`,
  );
  const api = KubernetesObjectApi.makeApiClient(kube.admin);
  const objects: KubernetesObject[] = [
    ...gpuQueueObjects(kube.namespace, QUEUE, 2, { withinClusterQueue: 'LowerPriority' }),
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'WorkloadPriorityClass',
      metadata: { name: URGENT },
      value: 1000,
      description: 'preempts the ClusterQueue',
    } as KubernetesObject,
  ];
  for (const o of objects) await api.create(o);
  env = await devServerEnv();
  registry = await startRegistry();
  image = await pushSokobanImage(registry);
  backend = adminBackend(kube);
  watcher = watchClusters();
});
after(async () => {
  watching = false;
  await watcher;
  backend?.close();
  await env?.teardown();
  await registry?.stop();
  await kueue?.stop();
  await kube?.stop();
});

function spec(name: string, steps: number, saveFreq: number, priorityClass?: string): ExperimentSpec {
  const s = kuberaySpec(kube.storageDir, kube.pvc);
  return {
    ...s,
    name,
    image,
    deadlines: { ...s.deadlines, joinSeconds: 600, noProgressSeconds: 300 },
    trainer: { ...s.trainer, totalTrainingSteps: steps, saveFreq },
    kuberay: {
      ...s.kuberay!,
      queueName: QUEUE,
      ...(priorityClass ? { kueuePriorityClass: priorityClass } : {}),
    },
  };
}

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
  const taskQueue = uniqueId('kueue');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ ...activityDeps(config, env.client), backends: { kuberay: backend } }),
  });
  return worker.runUntil(fn(taskQueue));
}

type Handle = Awaited<ReturnType<typeof env.client.workflow.start<typeof experiment>>>;

/** Poll the experiment's status until `want` holds; every status seen is kept. */
async function waitForStatus(
  handle: Handle,
  want: (s: ExperimentStatus) => boolean,
  seen: ExperimentStatus[] = [],
  timeoutMs = 900_000,
): Promise<ExperimentStatus> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await handle.query<ExperimentStatus>('status').catch(() => undefined);
    if (status) {
      seen.push(status);
      if (want(status)) return status;
    }
    const { status: run } = await handle.describe();
    if (run.name !== 'RUNNING')
      throw new Error(`${handle.workflowId} closed (${run.name}) first: ${JSON.stringify(status)}`);
    await sleep(500);
  }
  throw new Error(`${handle.workflowId}: status not reached in time`);
}

/** The first attempt's RayCluster of an experiment workflow (the names the product gives). */
const clusterOf = (name: string, workflowId: string) => clusterName(name, workflowId, 0);

describe('Kueue in front of KubeRay (real Kueue v0.17.0, real operator, real Ray)', () => {
  it('two 2-GPU experiments on a 2-GPU ClusterQueue: the second waits in stage `queued` at place 1 and is admitted only after the first is torn down', async () => {
    await withWorker(async (taskQueue) => {
      const first = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('kueue-first'),
        args: [testInput(spec('kueue-first', 10, 5))],
      });
      // The first is admitted (past `queued`) before the second exists: the order is certain.
      await waitForStatus(first, (s) => s.stage === 'join' || s.stage === 'train');
      const second = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('kueue-second'),
        args: [testInput(spec('kueue-second', 10, 5))],
      });
      const seen: ExperimentStatus[] = [];
      const queued = await waitForStatus(
        second,
        (s) => s.stage === 'queued' && s.queuePosition !== undefined,
        seen,
      );
      assert.equal(queued.queuePosition, 1, JSON.stringify(queued));
      const firstResult = await first.result();
      const secondResult = await second.result();
      const errors = (r: typeof firstResult) =>
        r.stages
          .filter((s) => s.error)
          .map((s) => `${s.stage}#${s.attempt}: ${s.error}`)
          .join('\n');
      assert.equal(firstResult.outcome, 'succeeded', errors(firstResult));
      assert.equal(secondResult.outcome, 'succeeded', errors(secondResult));
      const stage = (r: typeof firstResult, name: string) => r.stages.find((s) => s.stage === name);
      // Both waited in `queued` (the first briefly); the second's wait ended only after the first's teardown began.
      assert.ok(stage(firstResult, 'queued'), JSON.stringify(firstResult.stages.map((s) => s.stage)));
      const secondQueued = stage(secondResult, 'queued')!;
      const firstTeardown = stage(firstResult, 'teardown')!;
      assert.ok(
        secondQueued.endedAt! >= firstTeardown.startedAt,
        `second admitted ${secondQueued.endedAt}, first's teardown began ${firstTeardown.startedAt}`,
      );
      assert.ok(stage(secondResult, 'train')!.startedAt >= stage(firstResult, 'train')!.endedAt!);
      // Kueue's own record: the second RayCluster was unsuspended only after the first was deleted.
      const a = clusterTimes.get(clusterOf('kueue-first', first.workflowId));
      const b = clusterTimes.get(clusterOf('kueue-second', second.workflowId));
      assert.ok(a?.admitted && a.gone && b?.admitted, JSON.stringify([...clusterTimes]));
      assert.ok(b.admitted >= a.gone, `second admitted ${b.admitted}, first deleted ${a.gone}`);
      console.log(
        `# Kueue admission with an empty queue (RayCluster seen -> unsuspended, 100 ms polls): ${((a.admitted - a.seen) / 1000).toFixed(1)} s; the second: first deleted -> admitted ${((b.admitted - a.gone) / 1000).toFixed(1)} s, queued ${((b.admitted - b.seen) / 1000).toFixed(1)} s in all; places seen: ${[...new Set(seen.map((s) => s.queuePosition))].join(',')}`,
      );
    });
  });

  it('a higher-priority experiment preempts a running campaign: a preemption recorded (not a failure), the next attempt readmitted and resumed from the latest checkpoint, no step lost beyond saveFreq', async () => {
    const saveFreq = 4;
    await withWorker(async (taskQueue) => {
      const campaignId = uniqueId('kueue-campaign');
      const handle = await env.client.workflow.start<typeof campaign>('campaign', {
        taskQueue,
        workflowId: campaignId,
        args: [
          {
            spec: spec('kueue-campaign', 400, saveFreq),
            budgets: {
              maxAttempts: 3,
              maxAttemptsWithoutNewCheckpoint: 2,
              historyEventsBeforeContinueAsNew: 2000,
            },
            provenance: testInput().provenance,
          },
        ],
      });
      // Training, with a checkpoint written: then the urgent experiment arrives.
      const deadline = Date.now() + 900_000;
      let progress: CampaignProgress | undefined;
      while (Date.now() < deadline) {
        progress = await handle.query<CampaignProgress>('progress').catch(() => progress);
        if (progress && progress.lastCheckpointStep >= saveFreq) break;
        await sleep(500);
      }
      assert.ok(progress && progress.lastCheckpointStep >= saveFreq, JSON.stringify(progress));
      const urgent = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('kueue-urgent'),
        args: [testInput(spec('kueue-urgent', 6, 3, URGENT))],
      });
      // The resumed attempt training again: its status shows a step past the one it resumed from.
      let trainingAgainAt: number | undefined;
      let polling = true;
      const poll = (async () => {
        let from: number | undefined;
        while (polling && trainingAgainAt === undefined) {
          const p = await handle.query<CampaignProgress>('progress').catch(() => undefined);
          if (p?.attempt === 2 && p.phase === 'running') {
            from ??= p.step;
            const child = env.client.workflow.getHandle(`${campaignId}-a2`);
            const s = await child.query<ExperimentStatus>('status').catch(() => undefined);
            if (s?.stage === 'train' && s.lastStep > from) trainingAgainAt = Date.now();
          }
          await sleep(250);
        }
      })();
      const urgentResult = await urgent.result();
      assert.equal(urgentResult.outcome, 'succeeded', JSON.stringify(urgentResult.stages));
      const result = (await handle.result()) as CampaignResult;
      polling = false;
      await poll;
      const [preempted, resumed] = result.attempts;
      assert.equal(result.outcome, 'succeeded', JSON.stringify(result.attempts.map((a) => a.ended)));
      assert.equal(preempted?.outcome, 'preempted', JSON.stringify(preempted?.ended));
      assert.equal(preempted.ended.type, 'ClusterPreempted');
      assert.ok(resumed, 'a second attempt ran');
      // Resumed from the latest complete checkpoint the preempted attempt left.
      assert.equal(resumed.startedFromStep, preempted.checkpointStepAfter);
      assert.ok(resumed.startedFromStep >= saveFreq);
      const stepAtPreemption = Number(/at step (\d+)/.exec(preempted.ended.message)?.[1] ?? NaN);
      assert.ok(
        stepAtPreemption - resumed.startedFromStep <= saveFreq,
        `preempted at step ${stepAtPreemption}, resumed from ${resumed.startedFromStep} (saveFreq ${saveFreq})`,
      );
      // The resumed attempt waited in the queue behind the urgent one.
      assert.ok(resumed.stages?.some((s) => s.stage === 'queued'));
      // Kueue suspended the campaign's first cluster (not a delete by the product).
      const times = clusterTimes.get(clusterOf('kueue-campaign', preempted.workflowId));
      assert.ok(times?.suspendedAgain, JSON.stringify([...clusterTimes]));
      assert.ok(trainingAgainAt, 'the resumed attempt trained');
      const u = clusterTimes.get(clusterOf('kueue-urgent', urgent.workflowId));
      console.log(
        `# preemption (campaign's RayCluster suspended by Kueue) -> the next attempt training again: ${((trainingAgainAt - times.suspendedAgain) / 1000).toFixed(1)} s, of which the urgent experiment held the quota ${u?.admitted && u.gone ? ((u.gone - u.admitted) / 1000).toFixed(1) : '?'} s; urgent created -> campaign suspended ${u ? ((times.suspendedAgain - u.seen) / 1000).toFixed(1) : '?'} s; preempted at step ${stepAtPreemption}, resumed from ${resumed.startedFromStep}`,
      );
    });
  });
});
