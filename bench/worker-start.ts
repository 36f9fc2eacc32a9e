/**
 * Benchmark: worker start time, from spawning the process to its first poll ("worker: polling task
 * queue" in its JSON log), with the prebuilt workflow bundle (dist/worker/workflow-bundle.js) vs bundling
 * the workflow code on start, against the real Temporal dev server. Median of N (default 5) each.
 *   npm run build && npx tsx bench/worker-start.ts [runs]
 * Runs under the shared test lock on the development machines (it starts a Temporal server).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/config/config.js';
import { devServerEnv } from '../test/helpers/temporal.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = ['bench/worker-start.ts', 'src'];

const runs = Number(process.argv[2] ?? 5);
const prebuilt = join(REPO_ROOT, 'dist', 'worker', 'workflow-bundle.js');
if (!existsSync(prebuilt)) {
  console.error(`no ${prebuilt}: run 'npm run build' first`);
  process.exit(2);
}

/** Seconds from spawn to the worker's first poll; the worker is stopped right after. */
function startOnce(args: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('worker: polling task queue')) {
        const seconds = (performance.now() - t0) / 1000;
        child.kill('SIGKILL');
        resolve(seconds);
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`worker exited (${code}) before polling:\n${out}`)));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');

const env = await devServerEnv();
try {
  const base = {
    TEMPORAL_ADDRESS: env.address,
    RAGEN_TASK_QUEUE: `bench-worker-start-${process.pid}`,
    RAGEN_LOG_LEVEL: 'INFO',
  };
  const modes: [string, string[], Record<string, string>][] = [
    ['node dist/worker/worker.js, prebuilt bundle', ['dist/worker/worker.js'], {}],
    [
      'node dist/worker/worker.js, bundle on start',
      ['dist/worker/worker.js'],
      { RAGEN_WORKFLOW_BUNDLE: 'off' },
    ],
    [
      'tsx src/worker/worker.ts, prebuilt bundle',
      ['--import', 'tsx', 'src/worker/worker.ts'],
      { RAGEN_WORKFLOW_BUNDLE: prebuilt },
    ],
    ['tsx src/worker/worker.ts, bundle on start (dev path)', ['--import', 'tsx', 'src/worker/worker.ts'], {}],
  ];
  const results: { mode: string; medianSeconds: number; runsSeconds: number[] }[] = [];
  for (const [name, args, extra] of modes) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await startOnce(args, { ...base, ...extra }));
    console.log(`${name.padEnd(46)} median ${median(times).toFixed(2)} s  (runs: ${fmt(times)})`);
    results.push({ mode: name, medianSeconds: median(times), runsSeconds: times });
  }
  writeResults('worker-start', measuredCode, { runs, modes: results });
} finally {
  await env.teardown();
}
