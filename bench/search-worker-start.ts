/**
 * The search worker's start: milliseconds from spawn to polling its task queue, and its peak RSS
 * then (the worker's own getrusage), 3 starts against a local Temporal test server. The same start
 * `dev` and `--embedded` make (src/worker/search-worker.ts). Under the shared lock (it starts a server):
 *   flock /tmp/ray-tests.lock npx tsx bench/search-worker-start.ts
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadConfig } from '../src/config/config.js';
import { startSearchWorker } from '../src/worker/search-worker.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = ['bench/search-worker-start.ts', 'src/worker/search-worker.ts', 'search/ragen_search'];

const config = loadConfig();
const env = await TestWorkflowEnvironment.createTimeSkipping({
  server: { executable: { type: 'existing-path', path: config.testServerBin } },
});
const starts: { startMs: number; maxRssKiB: number }[] = [];
try {
  for (let i = 0; i < 3; i++) {
    const w = await startSearchWorker({
      python: config.python,
      address: env.address,
      namespace: env.namespace ?? 'default',
      taskQueue: `search-start-${i}`,
      runRoot: mkdtempSync(join(tmpdir(), 'search-start-')),
    });
    starts.push({ startMs: w.startMs, maxRssKiB: w.maxRssKiB });
    console.log(`start ${i}: ${w.startMs} ms, peak RSS ${w.maxRssKiB} KiB`);
    await w.stop();
  }
} finally {
  await env.teardown();
}
writeResults('search-worker-start', measuredCode, { starts });
