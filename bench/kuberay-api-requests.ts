/**
 * Kubernetes API requests per minute of one experiment while it waits for workers and trains:
 * the join and train activities call describeCluster every RAGEN_POLL_INTERVAL_MS (2 s). Runs
 * against the real kube-apiserver of the test environment for BENCH_SECONDS (default 330, past
 * one server-side watch timeout of 300 s), with the status changing every 30 s as an operator
 * would change it. Prints the numbers; no Ray needed (only Kubernetes requests are counted).
 *
 *   npx tsx bench/kuberay-api-requests.ts
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { KubeRayBackend } from '../src/backends/kuberay/kuberay-backend.js';
import { RAYCLUSTER } from '../src/backends/kuberay/raycluster.js';
import { startKubeEnv } from '../test/helpers/kube-env.js';
import { kuberaySpec } from '../test/helpers/kuberay-specs.js';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 330);
const pollMs = Number(process.env['RAGEN_POLL_INTERVAL_MS'] ?? 2000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kube = await startKubeEnv({ namespace: 'ragen-bench' });
try {
  const backend = new KubeRayBackend({ namespace: kube.namespace, kubeconfig: kube.adminKubeconfig, dashboard: 'service', python: 'python' });
  const owner = { experiment: 'bench', workflowId: 'bench-wf', runId: 'bench-run', attempt: 0 };
  const handle = await backend.createCluster({ name: 'bench-a0', spec: kuberaySpec('/tmp/ragen-bench', kube.pvc), owner });
  const operator = kube.admin.makeApiClient(CustomObjectsApi);
  const params = { group: RAYCLUSTER.group, version: RAYCLUSTER.version, namespace: kube.namespace, plural: RAYCLUSTER.plural, name: 'bench-a0' };
  await backend.describeCluster(handle);
  const start = Date.now();
  const before = backend.api.requests;
  let polls = 0;
  let nextStatus = start;
  let ready = 0;
  while (Date.now() - start < seconds * 1000) {
    if (Date.now() >= nextStatus) {
      // What KubeRay does as workers come up: a status write the watch delivers.
      const o = (await operator.getNamespacedCustomObject(params)) as { status?: unknown };
      o.status = { desiredWorkerReplicas: 2, readyWorkerReplicas: ready++ % 3 };
      await operator.replaceNamespacedCustomObjectStatus({ ...params, body: o });
      nextStatus += 30_000;
    }
    await backend.describeCluster(handle);
    polls++;
    await sleep(pollMs);
  }
  const requests = backend.api.requests - before;
  const minutes = (Date.now() - start) / 60_000;
  console.log(`describeCluster polls: ${polls} (every ${pollMs} ms) over ${(minutes * 60).toFixed(0)} s`);
  console.log(`kube API requests: ${requests} = ${(requests / minutes).toFixed(2)} per minute (a GET and a watch at start and after each server-side watch timeout)`);
  await backend.deleteCluster(handle);
  backend.close();
} finally {
  await kube.stop();
}
