import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { type ActivityDeps, createActivities } from '../activities/index.js';
import { activityRetry } from '../activities/common/heartbeat-loop.js';
import type { BackendLogger } from '../backends/logger.js';
import { RayDashboardClient } from '../backends/ray/dashboard-client.js';
import { createBackends } from '../backends/registry.js';
import { type OrchestratorConfig, loadConfig } from '../config/config.js';
import { JsonSdkLogger, activityContextLogger, jsonLogger } from './logging.js';
import { queryStopAtCheckpointPending, signalProgress } from './progress-reporter.js';
import { RegistryClient } from '../registry/client.js';
import { loadBudgetsFile, loadBudgetsFileNow } from '../config/budgets-file.js';
import { budgetLedgerClient } from './budget-ledger-client.js';
import { budgetPatchActivation } from './budget-patch-activation.js';
import { temporalConnectionSettings } from '../temporal/temporal-connection.js';
import { workflowInterceptorModules, workflowSource } from './workflow-code.js';
import { describeUserError } from '../config/user-errors.js';
import { describeWorkflowStatus } from './workflow-status.js';
import { activityMetricsInterceptor } from '../metrics/activity-metrics-interceptor.js';
import { registerClustersAlive } from '../metrics/clusters-alive.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { type ProductMetrics, createProductMetrics } from '../metrics/product-metrics.js';

export { workflowsPath } from './workflow-code.js';

/** The real dependencies of the activities: backends from the config, Temporal through the client. */
export function activityDeps(
  config: OrchestratorConfig,
  client: Client,
  logger: BackendLogger = activityContextLogger,
): ActivityDeps {
  return {
    backends: createBackends(config, logger, activityRetry),
    rayHead: (url, token) => new RayDashboardClient(url, token, activityRetry),
    reportProgress: signalProgress(client),
    stopAtCheckpointPending: queryStopAtCheckpointPending(client),
    workflowStatus: describeWorkflowStatus(client),
    imageRegistry: new RegistryClient({ dockerConfigPath: config.dockerConfigPath }),
    pollIntervalMs: config.RAGEN_POLL_INTERVAL_MS,
    python: config.python,
    checkpointSignalIntervalMs: config.RAGEN_CHECKPOINT_SIGNAL_SECONDS * 1000,
    nodeSuspectHours: config.RAGEN_NODE_SUSPECT_HOURS,
    ...budgetDeps(config.RAGEN_BUDGETS_FILE, client, config.RAGEN_TASK_QUEUE),
  };
}

/**
 * Budgets when a file is named: read on each reserve (an edit applies to the next run); the team
 * workflows run on this worker's task queue.
 */
export function budgetDeps(
  file: string | undefined,
  client: Client,
  taskQueue: string,
): Pick<ActivityDeps, 'budgets'> {
  if (!file) return {};
  return { budgets: { load: () => loadBudgetsFile(file), ledger: budgetLedgerClient(client, taskQueue) } };
}

/**
 * Composition root: real backends, a client for progress signals, the worker. Connection settings
 * are the `temporal` CLI's (profile file and TEMPORAL_* variables: address, namespace, TLS, API key).
 */
export async function createWorker(
  config: OrchestratorConfig,
  metrics?: ProductMetrics,
): Promise<{ worker: Worker; client: Client; close: () => Promise<void> }> {
  const { connectionOptions, namespace } = config.temporal;
  const connection = await NativeConnection.connect(connectionOptions);
  const clientConnection = await Connection.connect(connectionOptions);
  const client = new Client({ connection: clientConnection, namespace });
  const deps = activityDeps(config, client);
  // A broken budgets file stops the worker at start, naming the field, rather than each run later.
  if (deps.budgets) await deps.budgets.load();
  const source = workflowSource(config.RAGEN_WORKFLOW_BUNDLE);
  const budgetsFile = config.RAGEN_BUDGETS_FILE;
  if (metrics) registerClustersAlive(metrics.registry, deps.backends);
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: config.RAGEN_TASK_QUEUE,
    // The prebuilt bundle (npm run build) when present; the sources, bundled now, otherwise.
    ...source,
    activities: createActivities(deps),
    // A new run takes the team-budget branch (and records its marker) only when its team has a budget.
    patchActivationCallback: budgetPatchActivation(
      budgetsFile ? () => loadBudgetsFileNow(budgetsFile) : undefined,
    ),
    // Cancellation reaches an activity in a heartbeat reply; the default throttle (0.8 x the 60 s
    // heartbeat timeout) would let a cancelled or paused training job run on for up to 48 s.
    maxHeartbeatThrottleInterval: '3 seconds',
    interceptors: {
      // For workflows bundled at start; a prebuilt bundle has them built in (the SDK warns if both).
      ...('workflowsPath' in source ? { workflowModules: workflowInterceptorModules } : {}),
      ...(metrics ? { activity: [activityMetricsInterceptor(metrics)] } : {}),
    },
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

/** `node dist/worker/worker.js` (or tsx src/worker/worker.ts): JSON log lines on stdout, one per event. */
async function main(): Promise<void> {
  const startedAt = performance.now();
  const config = loadConfig();
  const logger = new JsonSdkLogger(jsonLogger(config.RAGEN_LOG_LEVEL ?? 'INFO'));
  // The SDK's own lines and the native core's (forwarded at WARN) go through the same JSON logger.
  Runtime.install({
    logger,
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(config.RAGEN_METRICS_PORT === 'off'
        ? {}
        : { metrics: { prometheus: { bindAddress: `127.0.0.1:${config.RAGEN_SDK_METRICS_PORT}` } } }),
    },
  });
  const metrics = config.RAGEN_METRICS_PORT === 'off' ? undefined : createProductMetrics();
  // Up before the worker (bundling the workflows on start takes a while): /healthz answers at once,
  // /readyz says 503 until the worker polls.
  const started: { worker?: Worker } = {};
  const endpoint = metrics
    ? await startMetricsServer({
        port: config.RAGEN_METRICS_PORT as number,
        registry: metrics.registry,
        sdkMetricsUrl: `http://127.0.0.1:${config.RAGEN_SDK_METRICS_PORT}/metrics`,
        ready: () => started.worker?.getState() === 'RUNNING',
      })
    : undefined;
  const { worker, close } = await createWorker(config, metrics);
  started.worker = worker;
  logger.info('worker: polling task queue', {
    taskQueue: worker.options.taskQueue,
    namespace: config.temporal.namespace,
    address: config.temporal.address,
    workflowCode:
      'workflowBundle' in workflowSource(config.RAGEN_WORKFLOW_BUNDLE) ? 'prebuilt' : 'bundled on start',
    startMs: Math.round(performance.now() - startedAt),
    metricsPort: endpoint?.port ?? 'off',
  });
  await worker.run();
  endpoint?.server.close();
  await close();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main().catch((err: unknown) => {
    // A failure the operator can fix is one JSON line naming it; anything else keeps its stack.
    const known = describeUserError(err, safeSettings());
    const fields =
      known || !(err instanceof Error) ? {} : { err: { message: err.message, stack: err.stack } };
    console.log(
      JSON.stringify({
        level: 'error',
        time: new Date().toISOString(),
        ...fields,
        msg: known?.message ?? String(err),
      }),
    );
    process.exit(known?.exitCode ?? 1);
  });
}

function safeSettings() {
  try {
    return temporalConnectionSettings();
  } catch {
    return undefined;
  }
}
