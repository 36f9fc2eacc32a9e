import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  type V1Pod,
} from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../../src/activities/index.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { KUBERAY_PERMISSIONS } from '../../src/backends/kuberay/permissions.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import type { reaper } from '../../src/workflows/reaper.js';
import { type KubeEnv, adminBackend, startKubeEnv } from '../helpers/kube-env.js';
import type { KubeletStandIn } from '../helpers/kubelet-standin/index.js';
import { KUBE_ENV } from '../helpers/kubelet-standin/environment.js';
import { NODE_IP } from '../helpers/kubelet-standin/pod-network.js';
import { tcpForward } from '../helpers/kubelet-standin/service-proxy.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { pushSokobanImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { rayProcesses } from '../helpers/processes.js';
import { activityAttempts } from '../helpers/history-attempts.js';
import { DashboardStalls, dashboardPidAmong } from '../helpers/dashboard-stall.js';
import { testInput } from '../helpers/specs.js';
import { assertShippedCopyRan, changedPayloadCopy } from '../helpers/shipped-payload.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { applyAll, renderWorkerManifests, serviceAccountKubeconfig } from '../helpers/worker-manifests.js';

/**
 * Whole experiments on the kuberay backend: real Temporal dev server, real kube-apiserver, the
 * real KubeRay operator v1.5.0, real Ray in the operator's Pods, which the STAND-IN kubelet runs
 * (test/helpers/kubelet-standin/: no container runtime here).
 * Run under `flock /tmp/ray-test.lock`: the leak checks see every Ray process on the machine.
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
let kubelet: KubeletStandIn;
let backend: KubeRayBackend;
let storage: string;
/** A real Distribution registry on loopback holding the image the specs name: verify reads it. */
let registry: RunningRegistry;
let image = '';
const exec = promisify(execFile);
const isWorker = (pod: V1Pod) => pod.metadata?.labels?.['ray.io/node-type'] === 'worker';
/** The RayClusters whose Pods the kubelet started, in order (a re-create would show twice). */
const clustersRun = () => [
  ...new Set(kubelet.started.map((p) => p.metadata?.labels?.['ray.io/cluster'] ?? '')),
];

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  kube = await startKubeEnv();
  kubelet = kube.kubelet!;
  console.log(
    `# kube env warm start (etcd, kube-apiserver, KubeRay operator, stand-in kubelet): ${(kube.startMs / 1000).toFixed(1)} s`,
  );
  env = await devServerEnv();
  registry = await startRegistry();
  image = await pushSokobanImage(registry);
  storage = kube.storageDir;
  backend = adminBackend(kube);
});
after(async () => {
  backend?.close();
  await env?.teardown();
  await registry?.stop();
  await kube?.stop();
});

function spec(steps: number, saveFreq: number): ExperimentSpec {
  const s = kuberaySpec(storage, kube.pvc);
  // The kuberay default join deadline (large image pulls) applies.
  return {
    ...s,
    image,
    deadlines: { ...s.deadlines, joinSeconds: 600 },
    trainer: { ...s.trainer, totalTrainingSteps: steps, saveFreq },
  };
}

async function withWorker<T>(
  fn: (taskQueue: string) => Promise<T>,
  overrides: Partial<ActivityDeps> = {},
): Promise<T> {
  const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
  const taskQueue = uniqueId('kuberay');
  const deps = { ...activityDeps(config, env.client), backends: { kuberay: backend }, ...overrides };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(deps),
  });
  return worker.runUntil(fn(taskQueue));
}

type Handle = Awaited<ReturnType<typeof env.client.workflow.start<typeof experiment>>>;
async function waitForStage(
  handle: Handle,
  want: (s: { stage: string; lastStep: number }) => boolean,
  timeoutMs = 300_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await handle.query<{ stage: string; lastStep: number }>('status');
    if (want(status)) return;
    const { status: run } = await handle.describe();
    if (run.name !== 'RUNNING')
      throw new Error(
        `the workflow closed (${run.name}) before the stage was reached: ${JSON.stringify(status)}`,
      );
    await sleep(300);
  }
  throw new Error('stage not reached in time');
}

/** The attempt of the last run of an activity type, from the history (a retried activity shows > 1). */
async function lastAttempt(handle: Handle, activityType: string): Promise<number> {
  return (await activityAttempts(handle)).get(activityType) ?? 0;
}

async function assertClean(): Promise<void> {
  const left = await backend.kube.rayClusters.list('app.kubernetes.io/managed-by=ragen-orchestrator');
  assert.deepEqual(
    left.map((c) => c.metadata.name),
    [],
    'no RayCluster is left',
  );
  const pods = await kube.admin.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: kube.namespace });
  assert.deepEqual(
    pods.items.map((p) => p.metadata?.name),
    [],
    'no Pod is left',
  );
  assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  assert.deepEqual(kubelet.errors, []);
}

/** RayCluster created -> every Pod Ready -> every worker joined in Ray, printed for the report. */
function printStartTimes(cluster: string, createdAt: number, joinedAt: number | undefined): void {
  const pods = kubelet.started.filter((p) => p.metadata?.labels?.['ray.io/cluster'] === cluster);
  const lastReady = Math.max(...pods.map((p) => kubelet.readyAt.get(p.metadata?.name ?? '') ?? NaN));
  const joined = joinedAt ? `${((joinedAt - createdAt) / 1000).toFixed(1)} s` : '?';
  console.log(
    `# real operator: RayCluster create -> all ${pods.length} Pods Ready ${((lastReady - createdAt) / 1000).toFixed(1)} s; -> every worker joined in Ray ${joined}`,
  );
}

describe('experiment on kuberay (real kube-apiserver, real KubeRay operator, stand-in kubelet, real Ray)', () => {
  it('runs every stage with a changed local copy of the payload shipped as working_dir (training and trainer validation run it) and ends with the RayCluster and its Pods deleted; counts Kubernetes API requests', async () => {
    const clustersBefore = clustersRun().length;
    // The Pods mount the storage volume at the same path: the copy's marker file is written there.
    const copy = await changedPayloadCopy(await mkdtemp(join(storage, 'code-')));
    const code = { path: copy.root, exclude: ['tests/'], maxSizeMb: 100 };
    const samples: { stage: string; at: number; requests: number; joined: number }[] = [];
    const custom = kube.admin.makeApiClient(CustomObjectsApi); // not the backend's client: its requests are counted
    let createdAt = 0;
    const result = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('k-wf'),
        args: [testInput({ ...spec(20, 10), code })],
      });
      let done = false;
      const sampler = (async () => {
        while (!done) {
          const s = await handle
            .query<{ stage: string; joinedWorkers: number }>('status')
            .catch(() => undefined);
          const last = samples.at(-1);
          if (s && (last?.stage !== s.stage || last.joined !== s.joinedWorkers))
            samples.push({
              stage: s.stage,
              at: Date.now(),
              requests: backend.kube.transport.requests,
              joined: s.joinedWorkers,
            });
          if (!createdAt && s?.stage === 'join') {
            const list = (await custom.listNamespacedCustomObject({
              group: 'ray.io',
              version: 'v1',
              namespace: kube.namespace,
              plural: 'rayclusters',
            })) as { items: { metadata: { creationTimestamp: string } }[] };
            createdAt = Date.parse(list.items[0]?.metadata.creationTimestamp ?? '');
          }
          await sleep(250);
        }
      })();
      const r = await handle.result();
      done = true;
      await sampler;
      samples.push({ stage: 'end', at: Date.now(), requests: backend.kube.transport.requests, joined: 0 });
      return r;
    });
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.training.finalStep, 20);
    assert.equal(result.teardown.outcome, 'succeeded');
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')),
    );
    await assertShippedCopyRan(manifest, copy, [
      'trainer.total_training_steps=20',
      '++trainer.val_only=True',
    ]);
    assert.equal(manifest.image.ref, image);
    assert.equal(manifest.image.verified, true, manifest.image.note);
    assert.equal(manifest.image.rayVersion, '2.60.0');
    const clusters = clustersRun().slice(clustersBefore);
    assert.equal(clusters.length, 1, 'one RayCluster for one run');
    const pods = kubelet.started.filter((p) => p.metadata?.labels?.['ray.io/cluster'] === clusters[0]);
    assert.equal(pods.length, 3, 'the operator made a head and two worker Pods');
    assert.deepEqual(
      pods.filter(isWorker).map((p) => p.spec?.initContainers?.map((c) => c.name)),
      [['wait-gcs-ready'], ['wait-gcs-ready']],
    );
    printStartTimes(clusters[0] ?? '', createdAt, samples.find((s) => s.joined >= 2)?.at);
    await assertClean();
    const from = samples.find((s) => s.stage === 'join');
    const to = samples.find((s) => s.stage === 'validate');
    // Never vacuous: a sampler that saw neither stage fails the budget check instead of skipping it.
    assert.ok(
      from && to,
      `the sampler saw the join and validate stages: ${samples.map((s) => s.stage).join(' ')}`,
    );
    const minutes = (to.at - from.at) / 60_000;
    console.log(
      `# kube API requests while waiting and training: ${to.requests - from.requests} in ${(minutes * 60).toFixed(0)} s = ${((to.requests - from.requests) / minutes).toFixed(1)}/min`,
    );
    assert.ok(
      (to.requests - from.requests) / Math.max(minutes, 1) <= 12,
      'at most 12 requests a minute while waiting and training',
    );
    console.log(`# stages: ${samples.map((s) => `${s.stage}@${s.requests}`).join(' ')}`);
  });

  it('kube-apiserver restarted during join: the join activity retries and the run completes', async () => {
    let releaseWorkers: () => void = () => undefined;
    const workersHeld = new Promise<void>((r) => (releaseWorkers = r));
    // The worker Pods' containers wait (a slow image pull) until the API server is back.
    kubelet.hold = (pod) => (isWorker(pod) ? workersHeld : Promise.resolve());
    const result = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('k-restart'),
        args: [testInput(spec(10, 10))],
      });
      await waitForStage(handle, (s) => s.stage === 'join');
      await sleep(2000); // the join activity is polling the watched RayCluster
      await kube.restartApiServer(3000);
      releaseWorkers();
      const r = await handle.result();
      assert.ok(
        (await lastAttempt(handle, 'awaitJoin')) > 1,
        'the join activity failed while the API server was down and was retried',
      );
      return r;
    });
    kubelet.hold = undefined;
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.teardown.outcome, 'succeeded');
    await assertClean();
  });

  it("the head Pod's dashboard stopped for 15 s (SIGSTOP) at the training submit and again while training is polled: the run succeeds, one driver per stage, no activity retried", async () => {
    const stalls = new DashboardStalls(async (cluster) => {
      const head = kubelet.started.find(
        (p) => p.metadata?.labels?.['ray.io/cluster'] === cluster && !isWorker(p),
      );
      return dashboardPidAmong(await kubelet.podProcesses(head?.metadata?.name ?? ''));
    });
    const workflowId = uniqueId('k-stall');
    const started = Date.now();
    const result = await withWorker(
      (taskQueue) =>
        env.client.workflow.execute<typeof experiment>('experiment', {
          taskQueue,
          workflowId,
          args: [testInput(spec(20, 10))],
        }),
      { rayHead: stalls.rayHead },
    );
    console.log(
      `# [stall numbers] kuberay: run ${((Date.now() - started) / 1000).toFixed(1)} s; ${stalls.summary()}`,
    );
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.deepEqual(
      stalls.stalls.map((s) => s.what),
      ['train submit', 'train polling'],
    );
    assert.ok(
      stalls.retries.some((r) => r.what === 'POST /api/jobs/'),
      'the stalled submit was retried',
    );
    const cluster = stalls.submits[0]?.id.replace(/-[a-z]+-0$/, '') ?? '';
    assert.deepEqual(
      [...(stalls.jobsAtEnd ?? [])].sort(),
      ['checks', 'storage', 'train', 'validate'].map((stage) => `${cluster}-${stage}-0`),
      'one Ray job (one driver) per stage',
    );
    const handle = env.client.workflow.getHandle(workflowId);
    for (const name of ['allReduceCheck', 'train', 'validate'])
      assert.equal((await activityAttempts(handle)).get(name), 1, `${name} ran once`);
    await assertClean();
  });

  it('kubectl lists our RayCluster and Pods by label; `kubectl delete raycluster` during training: ClusterLost, no re-create, teardown clean', async () => {
    const clustersBefore = clustersRun().length;
    const kubectl = (...args: string[]) =>
      exec('kubectl', [`--kubeconfig=${kube.adminKubeconfig}`, `--namespace=${kube.namespace}`, ...args]);
    const outcome = await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('k-deleted'),
        args: [testInput(spec(400, 100))],
      });
      await waitForStage(handle, (s) => s.stage === 'train' && s.lastStep >= 1);
      const name = clustersRun().at(-1) ?? '';
      const { stdout } = await kubectl(
        'get',
        'rayclusters,pods',
        '-l',
        'app.kubernetes.io/managed-by=ragen-orchestrator',
        '-o',
        'name',
      );
      const listed = stdout.trim().split('\n').sort();
      assert.equal(listed.length, 4, stdout);
      assert.deepEqual(
        listed.filter((l) => !l.startsWith(`pod/${name}-`)),
        [`raycluster.ray.io/${name}`],
        'our labels reach the Pods the operator makes',
      );
      await kubectl('delete', 'raycluster', name, '--wait=false'); // "someone else", as a user would
      return handle.result().then(
        () => assert.fail('the run succeeded without its cluster'),
        (err: { cause?: { type?: string; message?: string; details?: unknown[] } }) => err.cause,
      );
    });
    assert.equal(outcome?.type, 'ClusterLost', JSON.stringify(outcome));
    assert.match(outcome?.message ?? '', /deleted|being deleted/);
    assert.match(outcome?.message ?? '', /outside this workflow/);
    const result = outcome?.details?.[0] as {
      training: { outcome: string };
      teardown: { outcome: string };
      submits: number;
    };
    assert.equal(result.training.outcome, 'failed');
    assert.equal(result.teardown.outcome, 'succeeded');
    assert.equal(result.submits, 1, 'no resubmit after training started');
    await sleep(2000);
    assert.equal(clustersRun().length - clustersBefore, 1, 'no re-create loop');
    await assertClean();
  });

  it('an image without wget (stand-in: the kubelet runs the Pods on a PATH without it): ImageContractUnmet naming wget from the probe events, in under 60 s', async () => {
    kubelet.withoutExecutables = () => ['wget'];
    const custom = kube.admin.makeApiClient(CustomObjectsApi);
    try {
      const { outcome, failedAt } = await withWorker(async (taskQueue) => {
        const handle = await env.client.workflow.start<typeof experiment>('experiment', {
          taskQueue,
          workflowId: uniqueId('k-no-wget'),
          args: [testInput(spec(20, 10))],
        });
        const cause = await handle.result().then(
          () => assert.fail('the run succeeded on an image without wget'),
          (err: { cause?: { type?: string; message?: string } }) => err.cause,
        );
        return { outcome: cause, failedAt: Date.now() };
      });
      assert.equal(outcome?.type, 'ImageContractUnmet', JSON.stringify(outcome));
      assert.match(outcome?.message ?? '', /cannot run wget/);
      assert.match(outcome?.message ?? '', /pod \S+-head-\S+/);
      assert.match(outcome?.message ?? '', /install wget in the image/);
      const name = clustersRun().at(-1) ?? '';
      const object = (await custom
        .getNamespacedCustomObject({
          group: 'ray.io',
          version: 'v1',
          namespace: kube.namespace,
          plural: 'rayclusters',
          name,
        })
        .catch(() => undefined)) as { metadata: { creationTimestamp: string } } | undefined;
      // The cluster is torn down by then: its creation time is the first Pod's the kubelet saw.
      const firstPod = kubelet.started.find((p) => p.metadata?.labels?.['ray.io/cluster'] === name);
      const createdAt = Date.parse(
        object?.metadata.creationTimestamp ?? String(firstPod?.metadata?.creationTimestamp ?? ''),
      );
      const seconds = (failedAt - createdAt) / 1000;
      console.log(`# no wget: RayCluster create -> ImageContractUnmet ${seconds.toFixed(1)} s`);
      assert.ok(seconds < 60, `failed ${seconds.toFixed(1)} s after the RayCluster was created`);
    } finally {
      kubelet.withoutExecutables = undefined;
    }
    await assertClean();
  });

  it('reaper on kuberay: an experiment terminated during training has its RayCluster deleted by the next pass', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('k-terminated'),
        args: [testInput(spec(400, 100))],
      });
      await waitForStage(handle, (s) => s.stage === 'train' && s.lastStep >= 1);
      const name = clustersRun().at(-1) ?? '';
      await handle.terminate('test: terminate skips every cleanup in the workflow');
      const terminatedAt = Date.now();
      assert.ok(
        await backend.kube.rayClusters.get(name),
        'terminate ran no teardown: the cluster is still there',
      );
      const report = await env.client.workflow.execute<typeof reaper>('reaper', {
        taskQueue,
        workflowId: uniqueId('reaper-pass'),
        args: [{ graceSeconds: 0 }],
      });
      const entry = report.entries.find((e) => e.cluster === name);
      assert.equal(entry?.action, 'deleted', JSON.stringify(report));
      assert.match(entry?.reason ?? '', /terminated/);
      assert.equal(await backend.kube.rayClusters.get(name), undefined);
      console.log(
        `# kuberay: terminate -> RayCluster and its Ray processes gone (one reaper pass, grace 0): ${((Date.now() - terminatedAt) / 1000).toFixed(1)} s`,
      );
    });
    await assertClean();
  });
});

/**
 * The worker deployed on Kubernetes from deploy/worker (kustomize), in this file's environment
 * (no second kube env: CI time). The RayClusters' namespace is the worker's own, as the
 * Deployment says (RAGEN_KUBERAY_NAMESPACE from metadata.namespace).
 */
describe('the worker on Kubernetes: deploy/worker rendered by kustomize and applied', () => {
  const saName = 'ragen-orchestrator';
  /** The namespaced rules of kuberay-rbac.yaml's Role, as `group/resource:verb`. */
  const namespaced = KUBERAY_PERMISSIONS.filter((p) => !p.cluster).flatMap((p) =>
    p.verbs.map((verb) => ({ group: p.group, resource: p.resource, verb })),
  );
  const cluster = KUBERAY_PERMISSIONS.filter((p) => p.cluster).flatMap((p) =>
    p.verbs.map((verb) => ({ group: p.group, resource: p.resource, verb })),
  );

  it('RBAC: the ServiceAccount may do exactly what the kuberay backend needs (SelfSubjectAccessReview per verb), and with one verb less preflight refuses, naming it', async () => {
    const objects = await renderWorkerManifests({ namespace: kube.namespace });
    assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort(), [
      'ClusterRole/ragen-orchestrator',
      'ClusterRoleBinding/ragen-orchestrator',
      'ConfigMap/ragen-orchestrator-worker',
      'Deployment/ragen-orchestrator-worker',
      'Role/ragen-orchestrator',
      'RoleBinding/ragen-orchestrator',
      'ServiceAccount/ragen-orchestrator',
    ]);
    for (const o of objects)
      if (o.kind !== 'ClusterRole' && o.kind !== 'ClusterRoleBinding')
        assert.equal(o.metadata?.namespace, kube.namespace, `${o.kind} in the overlay's namespace`);
    await applyAll(kube.admin, objects);
    const sa = await serviceAccountKubeconfig(kube.admin, kube.namespace, saName);
    const authz = sa.kc.makeApiClient(AuthorizationV1Api);
    const can = async (a: { group: string; resource: string; verb: string }, namespace?: string) =>
      (
        await authz.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { ...a, namespace } } },
        })
      ).status?.allowed ?? false;
    for (const a of namespaced)
      assert.equal(await can(a, kube.namespace), true, `may ${a.verb} ${a.resource} in its namespace`);
    for (const a of cluster) assert.equal(await can(a), true, `may ${a.verb} ${a.resource} (cluster)`);
    // Nothing more: the neighbouring verbs, and the same verbs in another namespace.
    const more = [
      { group: 'ray.io', resource: 'rayclusters', verb: 'update' },
      { group: 'ray.io', resource: 'rayclusters', verb: 'patch' },
      { group: '', resource: 'pods', verb: 'create' },
      { group: '', resource: 'pods', verb: 'delete' },
      { group: '', resource: 'secrets', verb: 'watch' },
      { group: '', resource: 'configmaps', verb: 'delete' },
      { group: 'apps', resource: 'deployments', verb: 'update' },
    ];
    for (const a of more)
      assert.equal(await can(a, kube.namespace), false, `may not ${a.verb} ${a.resource}`);
    for (const a of namespaced)
      assert.equal(await can(a, 'kube-system'), false, `may not ${a.verb} ${a.resource} elsewhere`);

    // One verb less (a Role edited by hand): preflight, as the worker runs it first, says which.
    const role = objects.find((o) => o.kind === 'Role') as KubernetesObject & {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    const less = {
      ...role,
      rules: role.rules.map((r) =>
        r.resources.includes('rayclusters') ? { ...r, verbs: r.verbs.filter((v) => v !== 'delete') } : r,
      ),
    };
    await applyAll(kube.admin, [less]);
    const asWorker = new KubeRayBackend({
      namespace: kube.namespace,
      kubeconfig: sa.path,
      dashboard: 'service',
      python: 'python',
    });
    try {
      const checks = await asWorker.preflight(spec(10, 10));
      const permissions = checks.find((c) => c.name === 'kuberay-permissions');
      assert.equal(permissions?.ok, false);
      assert.match(
        permissions?.detail ?? '',
        new RegExp(
          `cannot delete rayclusters\\.ray\\.io in namespace ${kube.namespace}; grant verbs \\[delete\\] on resource rayclusters \\(apiGroup ray\\.io\\)`,
        ),
      );
      assert.deepEqual(
        checks.filter((c) => !c.ok).map((c) => c.name),
        ['kuberay-permissions'],
        'only the missing verb is refused',
      );
      // The Role as the manifests have it: preflight passes.
      await applyAll(kube.admin, [role]);
      const again = await asWorker.preflight(spec(10, 10));
      assert.deepEqual(
        again.filter((c) => !c.ok),
        [],
        JSON.stringify(again),
      );
    } finally {
      asWorker.close();
      await applyAll(kube.admin, [role]);
    }
  });
  // Found by this test: the worker's lazily loaded kuberay backend did not forward dashboardToken,
  // so every job it submitted went without the cluster's token (HTTP 401 from the dashboard).
  it('end to end: the worker Pod from deploy/worker runs an experiment from inside the cluster (in-cluster service account, head Service DNS, RAGEN_KUBERAY_DASHBOARD=service)', async () => {
    const taskQueue = uniqueId('in-cluster');
    // Outside the cluster, reached from the Pod network through the node's bridge address (as a
    // real cluster reaches an external Temporal): the Temporal dev server, and the registry the
    // spec's image is in. The image's registry is 127.0.0.1:<port> (plain http); in the Pod an
    // ambassador container forwards that loopback port to the node.
    const [temporalHost = '', temporalPort = ''] = env.address.split(/:(?=\d+$)/);
    const registryPort = Number(registry.host.split(':')[1]);
    const forwards = [
      await tcpForward(
        { host: NODE_IP, port: Number(temporalPort) },
        { host: temporalHost, port: Number(temporalPort) },
      ),
      await tcpForward({ host: NODE_IP, port: registryPort }, { host: '127.0.0.1', port: registryPort }),
    ];
    // The workflow code prebuilt, as the image has it (npm run build), on the shared volume.
    const bundlePath = `${storage}/workflow-bundle.js`;
    await writeFile(bundlePath, (await workflowBundle()).code);
    const ambassador = `const net=require('net');net.createServer((c)=>{const o=net.connect(${registryPort},'${NODE_IP}');c.pipe(o).pipe(c);c.on('error',()=>o.destroy());o.on('error',()=>c.destroy());}).listen(${registryPort},'127.0.0.1')`;
    const objects = await renderWorkerManifests({
      namespace: kube.namespace,
      patches: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'ragen-orchestrator-worker' },
          data: {
            TEMPORAL_ADDRESS: `${NODE_IP}:${temporalPort}`,
            RAGEN_TASK_QUEUE: taskQueue,
            RAGEN_VENV: join(REPO_ROOT, '.venv'),
            RAGEN_WORKFLOW_BUNDLE: bundlePath,
            RAGEN_POLL_INTERVAL_MS: '1000',
          },
        } as KubernetesObject,
      ],
      jsonPatches: [
        {
          target: { kind: 'Deployment', name: 'ragen-orchestrator-worker' },
          ops: [
            // The spec's kuberay.storage.mountPath, where the Ray Pods mount the claim too.
            {
              op: 'replace',
              path: '/spec/template/spec/containers/0/volumeMounts/0/mountPath',
              value: storage,
            },
            // No image runs here: the checkout plays it (the Dockerfile's CMD, from the sources).
            {
              op: 'add',
              path: '/spec/template/spec/containers/0/command',
              value: [join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), 'src/worker/worker.ts'],
            },
            { op: 'add', path: '/spec/template/spec/containers/0/workingDir', value: REPO_ROOT },
            {
              op: 'add',
              path: '/spec/template/spec/containers/-',
              value: {
                name: 'registry-ambassador',
                image: 'ragen-orchestrator-worker',
                command: ['node', '-e', ambassador],
              },
            },
          ],
        },
      ],
    });
    const config = objects.find((o) => o.kind === 'ConfigMap') as KubernetesObject & {
      data: Record<string, string>;
    };
    assert.equal(
      config.data['RAGEN_KUBERAY_DASHBOARD'],
      'service',
      'the base sets the dashboard mode for in-cluster',
    );
    await applyAll(kube.admin, objects);
    // Stand-in for the Deployment and ReplicaSet controllers (no kube-controller-manager runs
    // here): one Pod from the Deployment's template, which the stand-in scheduler and kubelet run.
    const deployment = objects.find((o) => o.kind === 'Deployment') as KubernetesObject & {
      spec: { template: V1Pod };
    };
    const podName = 'ragen-orchestrator-worker-standin';
    const core = kube.admin.makeApiClient(CoreV1Api);
    const pod = await core.createNamespacedPod({
      namespace: kube.namespace,
      body: {
        metadata: { ...deployment.spec.template.metadata, name: podName, namespace: kube.namespace },
        spec: deployment.spec.template.spec,
      },
    });
    const podLog = () =>
      readFile(
        `${KUBE_ENV.podsRoot}/${(pod.metadata?.uid ?? '').replace(/-/g, '').slice(0, 10)}/logs/worker.log`,
        'utf8',
      ).catch(() => '(no log)');
    // The kubelet's Events on the Pod (a failed probe, a kill): why a container ended.
    const podEvents = async () =>
      (
        await core.listNamespacedEvent({
          namespace: kube.namespace,
          fieldSelector: `involvedObject.name=${podName}`,
        })
      ).items
        .map((e) => `${e.lastTimestamp?.toISOString() ?? ''} ${e.reason}: ${e.message}`)
        .join('\n') || '(no events)';
    // A worker that cannot start never polls: fail with its log instead of waiting for the run.
    let watching = true;
    const workerDied = (async () => {
      while (watching) {
        const p = await core.readNamespacedPod({ name: podName, namespace: kube.namespace });
        const worker = p.status?.containerStatuses?.find((c) => c.name === 'worker');
        if (
          worker?.state?.terminated ||
          (worker?.restartCount ?? 0) > 0 ||
          worker?.state?.waiting?.reason === 'CreateContainerConfigError'
        )
          throw new Error(
            `the worker Pod's worker container ended: ${JSON.stringify(worker)}\nPod events:\n${await podEvents()}\n${(await podLog()).slice(-4000)}`,
          );
        await sleep(1000);
      }
    })();
    try {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('k-in-cluster'),
        args: [testInput(spec(20, 10))],
      });
      const startedAt = Date.now();
      const result = await Promise.race([
        handle.result().catch(async (err: Error) => {
          // The failure's cause chain and the worker's own log, read before the Pod is deleted.
          const causes: string[] = [];
          for (let e: Error | undefined = err; e; e = e.cause as Error | undefined) causes.push(e.message);
          throw new Error(`${causes.join(' <- ')}\n${(await podLog()).slice(-6000)}`);
        }),
        workerDied.then(() => undefined),
      ]);
      assert.ok(result, 'the run finished');
      assert.equal(
        result.outcome,
        'succeeded',
        `${JSON.stringify(result, null, 2)}\n${(await podLog()).slice(-4000)}`,
      );
      assert.equal(result.training.finalStep, 20);
      assert.equal(result.teardown.outcome, 'succeeded');
      // Every activity ran in the Pod: the SDK's worker identity is <pid>@<hostname>, the Pod's name.
      const history = await handle.fetchHistory();
      const identities = new Set(
        (history.events ?? []).flatMap((e) => e.activityTaskStartedEventAttributes?.identity ?? []),
      );
      assert.ok(identities.size > 0);
      for (const id of identities)
        assert.match(id, new RegExp(`@${podName}$`), 'activities ran in the worker Pod');
      console.log(
        `# worker Pod (in-cluster): experiment of 20 steps ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
      );
    } finally {
      watching = false;
      await workerDied.catch(() => undefined);
      await core
        .deleteNamespacedPod({ name: podName, namespace: kube.namespace, gracePeriodSeconds: 5 })
        .catch(() => undefined);
      const deadline = Date.now() + 60_000;
      while (
        (
          await core.listNamespacedPod({
            namespace: kube.namespace,
            labelSelector: 'app.kubernetes.io/name=ragen-orchestrator-worker',
          })
        ).items.length &&
        Date.now() < deadline
      )
        await sleep(500);
      for (const f of forwards) await f.close();
    }
    await assertClean();
  });
});
