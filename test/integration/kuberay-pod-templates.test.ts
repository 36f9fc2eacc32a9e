import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CoreV1Api,
  CustomObjectsApi,
  SchedulingV1Api,
  type V1Container,
  type V1Pod,
} from '@kubernetes/client-node';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { loadConfig } from '../../src/config/config.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { KubeRaySettings } from '../../src/domain/cluster/kuberay.js';
import { type KubeEnv, startKubeEnv } from '../helpers/kube-env.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { rayProcesses } from '../helpers/processes.js';

/**
 * The spec's pod template fields, read back from the Pods the REAL KubeRay operator v1.5.0 makes
 * from our RayCluster (real kube-apiserver with its admission plugins; the STAND-IN kubelet runs
 * the Pods). Also what the operator and the kubelet report: a suspended cluster (as Kueue suspends
 * it) is queued, a missing PriorityClass becomes KubeRay's ReplicaFailure, a Ray container that
 * cannot start crash-loops. Run under `flock /tmp/ray-test.lock`.
 */
let kube: KubeEnv;
let core: CoreV1Api;
let custom: CustomObjectsApi;
let backend: KubeRayBackend;
const ns = 'ragen-templates';
const owner = (workflowId: string) => ({
  experiment: 'sokoban-test',
  workflowId,
  runId: 'run-templates',
  attempt: 0,
});

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  kube = await startKubeEnv({ namespace: ns });
  core = kube.admin.makeApiClient(CoreV1Api);
  custom = kube.admin.makeApiClient(CustomObjectsApi);
  await core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 'wandb' }, stringData: { 'api-key': 'not-a-real-key' } },
  });
  await core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 'hf-credentials' }, stringData: { TOKEN: 'not-a-real-token' } },
  });
  await core.createNamespacedSecret({
    namespace: ns,
    body: {
      metadata: { name: 'regcred' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': '{"auths":{}}' },
    },
  });
  await kube.admin
    .makeApiClient(SchedulingV1Api)
    .createPriorityClass({ body: { metadata: { name: 'ragen-training' }, value: 1000 } });
  backend = new KubeRayBackend({
    namespace: ns,
    kubeconfig: kube.adminKubeconfig,
    dashboard: 'service',
    python: loadConfig().python,
    pollMs: 300,
  });
});
after(async () => {
  backend?.close();
  await kube?.stop();
});

function specWith(k: Partial<KubeRaySettings>): ExperimentSpec {
  const s = kuberaySpec(kube.storageDir, kube.pvc);
  return { ...s, kuberay: { ...s.kuberay!, ...k } };
}

async function podsOf(cluster: string, count: number, timeoutMs = 60_000): Promise<V1Pod[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = (
      await core.listNamespacedPod({ namespace: ns, labelSelector: `ray.io/cluster=${cluster}` })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
    if (pods.length >= count) return pods;
    if (Date.now() > deadline)
      throw new Error(`${cluster}: ${pods.length}/${count} Pods after ${timeoutMs} ms`);
    await sleep(300);
  }
}

async function phaseOf(name: string, want: (phase: string) => boolean, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await backend.describeCluster({
      backend: 'kuberay',
      name,
      namespace: ns,
      owner: owner(name),
    });
    if (want(status.phase)) return status;
    if (Date.now() > deadline)
      throw new Error(`${name}: still ${status.phase} (${status.message}) after ${timeoutMs} ms`);
    await sleep(500);
  }
}

async function remove(name: string): Promise<void> {
  await backend.deleteCluster({ backend: 'kuberay', name, namespace: ns, owner: owner(name) });
  for (let i = 0; i < 100 && (await rayProcesses()).length > 0; i++) await sleep(200);
  assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
}

const ray = (pod: V1Pod): V1Container => pod.spec!.containers[0]!;
/** The client's model classes as plain JSON, to compare with object literals. */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));
const role = (pods: V1Pod[], type: 'head' | 'worker') =>
  pods.filter((p) => p.metadata?.labels?.['ray.io/node-type'] === type);

describe('pod template fields on the Pods the real KubeRay operator creates', () => {
  it('carries workingDir, resources, /dev/shm, env from Secrets by name, pull secrets, placement and priority into every Pod', async () => {
    const name = 'tmpl-a0';
    const spec = specWith({
      head: {
        workingDir: '/tmp',
        memory: '2Gi',
        shmSize: '512Mi',
        nodeSelector: { 'ragen.dev/stand-in': 'true' },
      },
      workers: {
        workingDir: '/tmp',
        memory: '1Gi',
        memoryLimit: '3Gi',
        cpuLimit: 2,
        nodeSelector: { 'ragen.dev/stand-in': 'true' },
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      },
      env: { WANDB_MODE: 'offline', WANDB_API_KEY: { secret: 'wandb', key: 'api-key' } },
      envFrom: [{ secret: 'hf-credentials', prefix: 'HF_' }],
      imagePullSecrets: ['regcred'],
      priorityClassName: 'ragen-training',
      oneWorkerPerNode: true,
    });
    await backend.createCluster({ name, spec, owner: owner(name) });
    try {
      const pods = await podsOf(name, 3);
      const [head] = role(pods, 'head');
      const workers = role(pods, 'worker');
      assert.ok(head);
      assert.equal(workers.length, 2);

      // workingDir
      for (const p of pods) assert.equal(ray(p).workingDir, '/tmp');
      // resources: CPU requested, no CPU limit unless asked; memory request and limit; GPUs as limits.
      assert.deepEqual(plain(ray(head).resources), {
        requests: { cpu: '1', memory: '2Gi' },
        limits: { memory: '2Gi' },
      });
      for (const w of workers) {
        assert.deepEqual(plain(ray(w).resources), {
          requests: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' },
          limits: { cpu: '2', memory: '3Gi', 'nvidia.com/gpu': '1' },
        });
        // The operator's ray start line takes --memory from the limit, --num-cpus from the limit.
        const cmd = [...(ray(w).command ?? []), ...(ray(w).args ?? [])].join(' ');
        assert.match(cmd, new RegExp(`--memory=${3 * 2 ** 30}\\b`));
        assert.match(cmd, /--num-cpus=2\b/);
      }
      // /dev/shm: ours on the head (sizeLimit shmSize, the operator adds none), the operator's on
      // workers, sized to the memory limit.
      const shm = (p: V1Pod) => {
        const mounts = ray(p).volumeMounts?.filter((m) => m.mountPath === '/dev/shm') ?? [];
        assert.equal(mounts.length, 1, 'one /dev/shm mount');
        return p.spec?.volumes?.find((v) => v.name === mounts[0]!.name)?.emptyDir;
      };
      assert.deepEqual(plain(shm(head)), { medium: 'Memory', sizeLimit: '512Mi' });
      for (const w of workers) assert.deepEqual(plain(shm(w)), { medium: 'Memory', sizeLimit: '3Gi' });
      // Secrets by name and key: the value is only in the Secret.
      for (const p of pods) {
        assert.deepEqual(plain(ray(p).env?.filter((e) => e.name.startsWith('WANDB_'))), [
          { name: 'WANDB_MODE', value: 'offline' },
          { name: 'WANDB_API_KEY', valueFrom: { secretKeyRef: { name: 'wandb', key: 'api-key' } } },
        ]);
        assert.deepEqual(plain(ray(p).envFrom), [{ prefix: 'HF_', secretRef: { name: 'hf-credentials' } }]);
        assert.doesNotMatch(JSON.stringify(p), /not-a-real-(key|token)/);
        assert.deepEqual(plain(p.spec?.imagePullSecrets), [{ name: 'regcred' }]);
        assert.equal(p.spec?.priorityClassName, 'ragen-training');
        assert.equal(p.spec?.priority, 1000, 'the Priority admission plugin resolved the class');
        assert.deepEqual(plain(p.spec?.nodeSelector), { 'ragen.dev/stand-in': 'true' });
      }
      for (const w of workers) {
        assert.deepEqual(plain(w.spec?.tolerations?.find((t) => t.key === 'nvidia.com/gpu')), {
          key: 'nvidia.com/gpu',
          operator: 'Exists',
          effect: 'NoSchedule',
        });
        assert.deepEqual(
          w.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]
            ?.labelSelector?.matchLabels,
          {
            'ray.io/cluster': name,
            'ray.io/node-type': 'worker',
          },
        );
        // The selector matches the labels the operator put on the worker Pods themselves.
        assert.equal(w.metadata?.labels?.['ray.io/cluster'], name);
      }
      assert.equal(head.spec?.affinity, undefined);
    } finally {
      await remove(name);
    }
  });
});

describe('what the real operator and the stand-in kubelet report', () => {
  it('a suspended cluster (as Kueue suspends it) is queued with its Pods deleted, and starts again when resumed', async () => {
    const name = 'queued-a0';
    await backend.createCluster({ name, spec: specWith({ queueName: 'team-gpus' }), owner: owner(name) });
    try {
      const rc = (await custom.getNamespacedCustomObject({
        group: 'ray.io',
        version: 'v1',
        namespace: ns,
        plural: 'rayclusters',
        name,
      })) as { metadata: { labels: Record<string, string> } };
      assert.equal(rc.metadata.labels['kueue.x-k8s.io/queue-name'], 'team-gpus');
      const patch = (suspend: boolean) =>
        custom.patchNamespacedCustomObject({
          group: 'ray.io',
          version: 'v1',
          namespace: ns,
          plural: 'rayclusters',
          name,
          body: [{ op: 'add', path: '/spec/suspend', value: suspend }],
        });
      await patch(true);
      const queued = await phaseOf(name, (p) => p === 'queued');
      assert.match(queued.message ?? '', /waiting for Kueue to admit it from queue team-gpus/);
      for (let i = 0; i < 100; i++) {
        const left = (
          await core.listNamespacedPod({ namespace: ns, labelSelector: `ray.io/cluster=${name}` })
        ).items;
        if (left.length === 0) break;
        await sleep(300);
      }
      // The operator marks it Suspended once every Pod is gone.
      let suspended: string | undefined;
      for (let i = 0; i < 100 && suspended !== 'True'; i++) {
        const rcAfter = (await custom.getNamespacedCustomObject({
          group: 'ray.io',
          version: 'v1',
          namespace: ns,
          plural: 'rayclusters',
          name,
        })) as {
          status?: { conditions?: { type: string; status: string }[] };
        };
        suspended = rcAfter.status?.conditions?.find((c) => c.type === 'RayClusterSuspended')?.status;
        if (suspended !== 'True') await sleep(300);
      }
      assert.equal(suspended, 'True');
      await patch(false);
      await phaseOf(name, (p) => p !== 'queued');
      // The operator may create the Pods of a resumed cluster only at its next periodic reconcile
      // (RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV: 300 s by default, 10 s in the test environment).
      await podsOf(name, 3, 60_000);
    } finally {
      await remove(name);
    }
  });

  it('a Pod the API refuses (no such PriorityClass) is KubeRay’s ReplicaFailure, reason kept', async () => {
    const name = 'replica-a0';
    await backend.createCluster({
      name,
      spec: specWith({ priorityClassName: 'no-such-class' }),
      owner: owner(name),
    });
    try {
      const failed = await phaseOf(name, (p) => p === 'failed');
      assert.equal(failed.failureType, 'ReplicaFailure');
      assert.match(
        failed.message ?? '',
        /ReplicaFailure: FailedCreateHeadPod: .*no PriorityClass with name no-such-class/s,
      );
    } finally {
      await remove(name);
    }
  });

  it('a Ray container that cannot start is PodCrashLooping, naming the container and its exit code', async () => {
    const name = 'crash-a0';
    // Python cannot start with a PYTHONHOME that does not exist: `ray start` exits 1 at once.
    await backend.createCluster({
      name,
      spec: specWith({ env: { PYTHONHOME: '/nonexistent' } }),
      owner: owner(name),
    });
    try {
      const failed = await phaseOf(name, (p) => p === 'failed', 120_000);
      assert.equal(failed.failureType, 'PodCrashLooping');
      assert.match(
        failed.message ?? '',
        /container ray-head is crash-looping \(restarted \d+ times, last exit code 1/,
      );
    } finally {
      await remove(name);
    }
  });
});
