/**
 * Benchmark: checkpoint hashing at real sizes. Writes a synthetic checkpoint (default 4 GiB: 48
 * FSDP-like shards of 80 MiB plus 256 small files of 1 MiB) into a temp dir, reads it once so both
 * contenders find it in the page cache, then hashes the same files with `sha256sum` (one process,
 * all files) and with the hashCheckpoints activity (MockActivityEnvironment: heartbeats and the
 * ledger included). Prints GB/s of each and their ratio (goal >= 0.9). Deletes the dir afterwards.
 * CPU bound: run it on a quiet machine, e.g. `nice -n 5 npx tsx bench/hash.ts [GiB]`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { filesUnder } from '../src/activities/checkpoints/checkpoints.js';
import { checkpointPath } from '../src/domain/spec/paths.js';
import {
  createHashCheckpoints,
  type HashCheckpointsResult,
} from '../src/activities/checkpoints/hash-checkpoints.js';
import { writeResults } from './results.js';
import { writeSyntheticCheckpoint } from './synthetic-checkpoint.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/hash.ts',
  'bench/synthetic-checkpoint.ts',
  'src/activities/checkpoints/hash-checkpoints.ts',
];

const run = promisify(execFile);
const gib = Number(process.argv[2] ?? 4);
const MiB = 1024 * 1024;

const root = await mkdtemp(join(tmpdir(), 'bench-hash-'));
try {
  const dir = join(root, 'ckpt');
  const step = checkpointPath(dir, 100);
  const { bytes: total, shards, smallFiles } = await writeSyntheticCheckpoint(dir, 100, gib);
  const files = await filesUnder(step);
  await run('sh', ['-c', 'cat "$@" > /dev/null', 'sh', ...files]); // warm the page cache

  const gbps = (ms: number) => total / 1e9 / (ms / 1000);
  const results: { name: string; ms: number }[] = [];
  for (let round = 0; round < 2; round++) {
    let t = performance.now();
    await run('sha256sum', files, { maxBuffer: 64 * MiB });
    results.push({ name: 'sha256sum', ms: performance.now() - t });
    t = performance.now();
    const ledgerPath = join(root, `ledger-${round}.json`);
    const r = (await new MockActivityEnvironment().run(createHashCheckpoints(), {
      checkpointDir: dir,
      ledgerPath,
      now: 'bench',
    })) as HashCheckpointsResult;
    results.push({ name: 'hashCheckpoints', ms: performance.now() - t });
    if (r.checkpoints[0]?.files.length !== files.length) throw new Error('hashCheckpoints missed files');
  }
  const best = (name: string) => Math.min(...results.filter((r) => r.name === name).map((r) => r.ms));
  console.log(
    `checkpoint: ${files.length} files, ${(total / 1e9).toFixed(2)} GB (${shards} x 80 MiB + ${smallFiles} x 1 MiB), page cache warm; best of 2`,
  );
  console.log(`sha256sum (coreutils, 1 process): ${gbps(best('sha256sum')).toFixed(2)} GB/s`);
  console.log(`hashCheckpoints (node crypto, 8 MiB reads): ${gbps(best('hashCheckpoints')).toFixed(2)} GB/s`);
  console.log(`ratio: ${(best('sha256sum') / best('hashCheckpoints')).toFixed(2)} (goal >= 0.9)`);
  writeResults('hash', measuredCode, {
    files: files.length,
    bytes: total,
    shards,
    smallFiles,
    pageCache: 'warm',
    bestOf: 2,
    sha256sumGBps: gbps(best('sha256sum')),
    hashCheckpointsGBps: gbps(best('hashCheckpoints')),
    ratio: best('sha256sum') / best('hashCheckpoints'),
    runs: results,
  });
} finally {
  await rm(root, { recursive: true, force: true });
}
