/**
 * One RayCluster through the real KubeRay operator v1.5.0 (Pods run by the stand-in kubelet, real
 * Ray in them), timed and counted: RayCluster create -> every Pod Ready -> every worker joined in
 * Ray (the head's node list), then Kubernetes API requests per minute of one experiment while it
 * waits and trains: describeCluster every RAGEN_POLL_INTERVAL_MS (2 s) for BENCH_SECONDS (default
 * 330, past one server-side watch timeout of 300 s), as the join and train activities call it.
 * Prints the numbers. Starts Ray: run under the shared lock.
 *
 *   flock /tmp/ray-test.lock npx tsx bench/kuberay-api-requests.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeRayBackend } from '../src/backends/kuberay/kuberay-backend.js';
import { loadConfig } from '../src/config/config.js';
import { startKubeEnv } from '../test/helpers/kube-env.js';
import { kuberaySpec } from '../test/helpers/kuberay-specs.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = ['bench/kuberay-api-requests.ts', 'src/backends/kuberay'];

const seconds = Number(process.env['BENCH_SECONDS'] ?? 330);
const pollMs = Number(process.env['RAGEN_POLL_INTERVAL_MS'] ?? 2000);

const kube = await startKubeEnv({ namespace: 'ragen-bench' });
console.log(
  `kube env (etcd, kube-apiserver, KubeRay operator, stand-in kubelet) started in ${(kube.startMs / 1000).toFixed(1)} s`,
);
try {
  const backend = new KubeRayBackend({
    namespace: kube.namespace,
    kubeconfig: kube.adminKubeconfig,
    dashboard: 'head-status',
    python: loadConfig().python,
    pollMs: 250,
  });
  const owner = { experiment: 'bench', workflowId: 'bench-wf', runId: 'bench-run', attempt: 0 };
  const spec = kuberaySpec(kube.storageDir, kube.pvc);
  const t0 = Date.now();
  const handle = await backend.createCluster({ name: 'bench-a0', spec, owner });
  const kubelet = kube.kubelet!;
  let podsReady = 0;
  let joined = 0;
  while (!joined) {
    const ready = kubelet.started.filter((p) => kubelet.readyAt.has(p.metadata?.name ?? ''));
    if (!podsReady && kubelet.started.length === 3 && ready.length === 3)
      podsReady = Math.max(...ready.map((p) => kubelet.readyAt.get(p.metadata?.name ?? '') ?? 0));
    const status = await backend.describeCluster(handle);
    if (status.workersAlive >= 2 && status.gpusRegistered >= 2) joined = Date.now();
    if (Date.now() - t0 > 300_000) throw new Error(`not joined within 300 s: ${status.message}`);
    await sleep(250);
  }
  while (!podsReady) {
    const ready = kubelet.started.filter((p) => kubelet.readyAt.has(p.metadata?.name ?? ''));
    if (ready.length === 3)
      podsReady = Math.max(...ready.map((p) => kubelet.readyAt.get(p.metadata?.name ?? '') ?? 0));
    await sleep(250);
  }
  console.log(
    `RayCluster create -> all 3 Pods Ready (readiness probes): ${((podsReady - t0) / 1000).toFixed(1)} s`,
  );
  console.log(
    `RayCluster create -> both workers joined in Ray with their GPUs: ${((joined - t0) / 1000).toFixed(1)} s`,
  );

  const start = Date.now();
  const before = backend.kube.transport.requests;
  let polls = 0;
  while (Date.now() - start < seconds * 1000) {
    await backend.describeCluster(handle);
    polls++;
    await sleep(pollMs);
  }
  const requests = backend.kube.transport.requests - before;
  const minutes = (Date.now() - start) / 60_000;
  console.log(`describeCluster polls: ${polls} (every ${pollMs} ms) over ${(minutes * 60).toFixed(0)} s`);
  console.log(
    `kube API requests: ${requests} = ${(requests / minutes).toFixed(2)} per minute (a GET and a watch at start and after each server-side watch timeout)`,
  );
  const d0 = Date.now();
  await backend.deleteCluster(handle);
  const deleteSeconds = (Date.now() - d0) / 1000;
  console.log(
    `delete -> RayCluster and its Pods gone (GC + kubelet termination): ${deleteSeconds.toFixed(1)} s`,
  );
  writeResults('kuberay-api-requests', measuredCode, {
    kubeEnvStartSeconds: kube.startMs / 1000,
    createToPodsReadySeconds: (podsReady - t0) / 1000,
    createToWorkersJoinedSeconds: (joined - t0) / 1000,
    pollMs,
    polls,
    pollSeconds: minutes * 60,
    kubeApiRequests: requests,
    kubeApiRequestsPerMinute: requests / minutes,
    deleteToGoneSeconds: deleteSeconds,
  });
  backend.close();
} finally {
  await kube.stop();
}
