/**
 * The product's worker as its own process for bench/vs-rayjob.ts, so its CPU time and memory are
 * its own (the bench process also runs the stand-in kubelet). Composed as src/worker/worker.ts composes
 * it (activityDeps from loadConfig(): poll interval, retries, registry client), with the kuberay
 * backend configured as createBackends configures it, except the dashboard mode: `head-status`,
 * the mode of a worker on the Pods' network (the test environment's host is on their bridge).
 * Env: TEMPORAL_ADDRESS, BENCH_TASK_QUEUE, BENCH_WORKFLOW_BUNDLE, BENCH_KUBECONFIG,
 * BENCH_NAMESPACE. Prints `polling` once it polls; answers an IPC message `requests` with
 * `{ requests }` (its Kubernetes API requests so far, as bench/kuberay-api-requests.ts counts
 * them); stops on SIGTERM.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { loadConfig } from '../../src/config/config.js';
import { activityDeps } from '../../src/worker/worker.js';

Runtime.install({ logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } });
const address = process.env.TEMPORAL_ADDRESS;
const connection = await NativeConnection.connect({ address });
const client = new Client({ connection: await Connection.connect({ address }) });
const config = loadConfig();
const backend = new KubeRayBackend({
  namespace: process.env.BENCH_NAMESPACE ?? 'default',
  kubeconfig: process.env.BENCH_KUBECONFIG,
  dashboard: 'head-status',
  python: 'python',
});
const deps = { ...activityDeps(config, client), backends: { kuberay: backend } };
const worker = await Worker.create({
  connection,
  taskQueue: process.env.BENCH_TASK_QUEUE ?? 'bench-vs-rayjob',
  workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE ?? '' },
  activities: createActivities(deps),
});
process.on('message', (m) => {
  if (m === 'requests') process.send?.({ requests: backend.kube.transport.requests });
});
process.once('SIGTERM', () => worker.shutdown());
console.log('polling');
await worker.run();
backend.close();
await connection.close();
process.disconnect?.();
