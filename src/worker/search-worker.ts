import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../config/config.js';

/** The search worker (search/ragen_search, Python): serves tpeAsk and tpeTell on its own task queue. */
export interface SearchWorker {
  /** Milliseconds from spawn to polling, and the process's peak RSS then (its own report). */
  startMs: number;
  maxRssKiB: number;
  stop: () => Promise<void>;
}

/**
 * Start `python -m ragen_search.worker` beside the TypeScript worker and wait until it polls.
 * `storage` is an Optuna storage URL; absent, the worker keeps its SQLite study under the run root.
 * The environment is passed on (TEMPORAL_* included); a worker that exits first is an error naming its output.
 */
export async function startSearchWorker(opts: {
  python: string;
  address: string;
  namespace: string;
  taskQueue?: string;
  runRoot: string;
  storage?: string;
}): Promise<SearchWorker> {
  const started = performance.now();
  const child: ChildProcess = spawn(opts.python, ['-m', 'ragen_search.worker'], {
    cwd: join(REPO_ROOT, 'search'),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.address,
      TEMPORAL_NAMESPACE: opts.namespace,
      RAGEN_RUN_ROOT: opts.runRoot,
      ...(opts.taskQueue ? { RAGEN_SEARCH_TASK_QUEUE: opts.taskQueue } : {}),
      ...(opts.storage ? { RAGEN_SEARCH_STORAGE: opts.storage } : {}),
    },
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const polling = new Promise<{ maxRssKiB: number }>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"search worker: polling task queue"'))
        resolve(JSON.parse(line) as { maxRssKiB: number });
    });
  });
  const first = await Promise.race([polling, exited.then((code) => ({ code }))]);
  if ('code' in first)
    throw new Error(
      `the search worker (python -m ragen_search.worker) exited with ${first.code}: ${stderr.join('').trim().slice(-2000)}`,
    );
  return {
    startMs: Math.round(performance.now() - started),
    maxRssKiB: first.maxRssKiB,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
