import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { REPO_ROOT, type OrchestratorConfig } from '../config/config.js';
import { startSearchWorker } from '../worker/search-worker.js';
import { createWorker } from '../worker/worker.js';
import { type DevServer, startDevServer, temporalReachable } from './dev-server.js';
import { installReaperSchedule } from './reaper-schedule.js';

/**
 * The embedded default: a Temporal dev server from the venv (persistent db under .run/) unless one
 * already answers at the configured address, plus a worker in this process and the search worker
 * (Python, Optuna: `search: {type: tpe}` sweeps) beside it.
 */
export async function withEmbeddedStack<T>(
  config: OrchestratorConfig,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  // The CLI shows its own status line; the in-process worker's INFO chatter would bury it.
  Runtime.install({ logger: new DefaultLogger(config.RAGEN_LOG_LEVEL ?? 'WARN') });
  let server: DevServer | undefined;
  const { address } = config.temporal;
  if (!(await temporalReachable(config.temporal.connectionOptions))) {
    const port = Number(address.split(':').at(-1));
    console.log(`starting the Temporal dev server on ${address} (UI on :${port + 1000})`);
    server = await startDevServer({
      temporalBin: config.temporalBin,
      dbFile: join(REPO_ROOT, '.run', 'temporal.db'),
      port,
      uiPort: port + 1000,
      logFile: join(REPO_ROOT, '.run', 'temporal.log'),
    });
  }
  // Only TPE sweeps need it: a search worker that cannot start is a warning, not a refusal.
  const search = await startSearchWorker({
    python: config.python,
    address,
    namespace: config.temporal.namespace,
    runRoot: config.RAGEN_RUN_ROOT,
  }).catch((err: unknown) => {
    console.warn(
      `warning: ${(err as Error).message}; sweeps with search.type tpe will wait for a search worker`,
    );
    return undefined;
  });
  const { worker, client, close } = await createWorker(config);
  const running = worker.run();
  try {
    return await fn(client);
  } finally {
    worker.shutdown();
    await running;
    await close();
    await search?.stop();
    await server?.stop();
  }
}

/** `dev`: server and worker until Ctrl-C. */
export async function devCommand(config: OrchestratorConfig): Promise<number> {
  await withEmbeddedStack(config, async (client) => {
    await installReaperSchedule(client, config.RAGEN_TASK_QUEUE, 300, { graceSeconds: 120 });
    console.log('dev: reaper schedule installed (every 300 s, grace 120 s)');
    console.log(`dev: worker polling ${config.RAGEN_TASK_QUEUE}, search worker ragen-search; Ctrl-C to stop`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  });
  return 0;
}
