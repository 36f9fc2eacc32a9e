/**
 * Kueue's admission latency with an empty queue: the real Kueue v0.17.0 (test/helpers/kueue.ts) on
 * the test kube-apiserver, the product's own RayCluster (buildRayCluster: 2 workers x 1
 * nvidia.com/gpu, created suspended with the queue label) in a LocalQueue of a 2-GPU ClusterQueue.
 * Each run: create -> Kueue unsuspends it (spec.suspend false, polled every 50 ms), then delete
 * and wait until its Workload is gone, so the next one finds the queue empty again. No operator or
 * Pods: admission is Kueue's alone. Also the time from Kueue's start to its webhooks answering.
 *
 *   flock /tmp/ray-test.lock npx tsx bench/kueue-admission.ts [runs, default 10]
 *
 * Writes bench/results/kueue-admission.json.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, KubernetesObjectApi } from '@kubernetes/client-node';
import { buildRayCluster } from '../src/backends/kuberay/raycluster.js';
import { startKubeEnv } from '../test/helpers/kube-env.js';
import { gpuQueueObjects, startKueue } from '../test/helpers/kueue.js';
import { kuberaySpec } from '../test/helpers/kuberay-specs.js';
import { median } from './kube-bench.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/kueue-admission.ts',
  'src/backends/kuberay/raycluster.ts',
  'test/helpers/kueue.ts',
  'scripts/k8s/versions.sh',
];

const runs = Number(process.argv[2] ?? 10);
const kube = await startKubeEnv({ kubelet: false, namespace: 'ragen-kueue-bench' });
try {
  const kueue = await startKueue(kube.admin, kube.adminKubeconfig);
  try {
    const objects = KubernetesObjectApi.makeApiClient(kube.admin);
    const queue = gpuQueueObjects(kube.namespace, 'ragen', 2);
    for (const o of queue) await objects.create(o);
    const custom = kube.admin.makeApiClient(CustomObjectsApi);
    const rc = { group: 'ray.io', version: 'v1', namespace: kube.namespace, plural: 'rayclusters' };
    const base = kuberaySpec(kube.storageDir, kube.pvc);
    const spec = {
      ...base,
      image: `registry.example/ragen@sha256:${'b'.repeat(64)}`,
      kuberay: { ...base.kuberay!, queueName: 'ragen' },
    };
    const admissionMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const name = `kueue-bench-${i}`;
      const owner = { experiment: 'kueue-bench', workflowId: `bench-${i}`, runId: 'r', attempt: 0 };
      const body = buildRayCluster({ name, namespace: kube.namespace, spec, owner });
      const created = Date.now();
      await custom.createNamespacedCustomObject({ ...rc, body });
      for (;;) {
        const o = (await custom.getNamespacedCustomObject({ ...rc, name })) as {
          spec: { suspend?: boolean };
        };
        if (o.spec.suspend !== true) break;
        if (Date.now() - created > 120_000) throw new Error(`${name} not admitted within 120 s`);
        await sleep(50);
      }
      admissionMs.push(Date.now() - created);
      console.log(`run ${i + 1}/${runs}: admitted ${admissionMs.at(-1)} ms after create`);
      await custom.deleteNamespacedCustomObject({ ...rc, name });
      for (;;) {
        const list = (await custom.listNamespacedCustomObject({
          group: 'kueue.x-k8s.io',
          version: 'v1beta2',
          namespace: kube.namespace,
          plural: 'workloads',
        })) as { items: unknown[] };
        const left = (await custom.listNamespacedCustomObject(rc)) as { items: unknown[] };
        if (list.items.length === 0 && left.items.length === 0) break;
        await sleep(100);
      }
    }
    const numbers = {
      kueueVersion: 'v0.17.0',
      runs,
      kueueStartToWebhooksAnsweringMs: kueue.readyMs,
      admissionMs: {
        median: median(admissionMs),
        min: Math.min(...admissionMs),
        max: Math.max(...admissionMs),
        all: admissionMs,
      },
      what: 'RayCluster create (product builder, suspended, queue label) -> spec.suspend false by Kueue, empty 2-GPU ClusterQueue; 50 ms polls',
    };
    console.log(JSON.stringify(numbers));
    writeResults('kueue-admission', measuredCode, numbers);
  } finally {
    await kueue.stop();
  }
} finally {
  await kube.stop();
}
