import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { type ActivityDeps, createActivities } from './activities/index.js';
import { RayDashboardClient } from './backends/ray/dashboard-client.js';
import { createBackends } from './backends/registry.js';
import { type OrchestratorConfig, loadConfig } from './config.js';
import { RegistryClient } from './registry/client.js';
import { signalProgress } from './progress-reporter.js';
import { describeWorkflowStatus } from './workflow-status.js';

/** Path of the workflow bundle's entry, next to this file (.ts under tsx, .js once built). */
export const workflowsPath = fileURLToPath(new URL(`./workflows/index${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

/** The real dependencies of the activities: backends from the config, Temporal through the client. */
export function activityDeps(config: OrchestratorConfig, client: Client): ActivityDeps {
  return {
    backends: createBackends(config),
    rayHead: (url) => new RayDashboardClient(url),
    reportProgress: signalProgress(client),
    workflowStatus: describeWorkflowStatus(client),
    imageRegistry: new RegistryClient({ dockerConfigPath: config.dockerConfigPath }),
    pollIntervalMs: config.RAGEN_POLL_INTERVAL_MS,
  };
}

/** Composition root: real backends, a client for progress signals, the worker. */
export async function createWorker(config: OrchestratorConfig): Promise<{ worker: Worker; client: Client; close: () => Promise<void> }> {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE });
  const deps = activityDeps(config, client);
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.RAGEN_TASK_QUEUE,
    workflowsPath,
    activities: createActivities(deps),
    // Cancellation reaches an activity in a heartbeat reply; the default throttle (0.8 x the 60 s
    // heartbeat timeout) would let a cancelled or paused training job run on for up to 48 s.
    maxHeartbeatThrottleInterval: '3 seconds',
  });
  return {
    worker,
    client,
    close: async () => {
      for (const backend of Object.values(deps.backends)) backend?.close?.();
      await clientConnection.close();
      await connection.close();
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { worker, close } = await createWorker(loadConfig());
  console.log('worker: polling task queue', worker.options.taskQueue);
  await worker.run();
  await close();
}
