/**
 * Benchmark: copying a checkpoint to S3 and fetching it back, on a real SeaweedFS S3 server
 * (test/helpers/seaweedfs.ts, loopback). Writes a synthetic checkpoint (default 4 GiB: 48 shards of
 * 80 MiB plus 256 files of 1 MiB, random bytes), hashes it into a ledger as a campaign does, then in
 * one run: the archive's upload (uploadFile per file: multipart, SHA256 per part, the ledger's sha256
 * checked) against `aws s3 cp --recursive` (the AWS CLI from the venv) of the same folder to another
 * prefix; then the campaign's resume from the store: the volume emptied, latestCompleteCheckpoint
 * fetches and verifies the checkpoint. Both uploads find the files in the page cache.
 * Shares the machine with whatever runs: its load is in the results file. Run it under the lock:
 * `flock /tmp/ray-tests.lock nice -n 5 npx tsx bench/object-store-upload.ts [GiB]`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createLatestCompleteCheckpoint } from '../src/activities/campaign-checkpoints.js';
import { createHashCheckpoints, type HashCheckpointsResult } from '../src/activities/hash-checkpoints.js';
import { uploadArchive } from '../src/activities/archive-upload.js';
import type { LatestCheckpoint } from '../src/domain/campaign.js';
import { REPO_ROOT } from '../src/config.js';
import { CONCURRENCY, PART_BYTES } from '../src/activities/object-store-upload.js';
import { startSeaweedS3 } from '../test/helpers/seaweedfs.js';
import { writeResults } from './results.js';

const run = promisify(execFile);
const gib = Number(process.argv[2] ?? 4);
const MiB = 1024 * 1024;
const smallFiles = Math.round(256 * (gib / 4));
const shardBytes = 80 * MiB;
const shards = Math.max(1, Math.round((gib * 1024 * MiB - smallFiles * MiB) / shardBytes));

async function fill(path: string, bytes: number, block: Buffer, index: number): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (let written = 0; written < bytes; written += block.length) {
      block.writeUInt32LE(index, 0);
      block.writeUInt32LE(written / block.length, 4);
      await file.write(block, 0, Math.min(block.length, bytes - written));
    }
  } finally {
    await file.close();
  }
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

const s3 = await startSeaweedS3();
const root = await mkdtemp(join(tmpdir(), 'objstore-bench-'));
try {
  Object.assign(process.env, s3.env);
  await s3.createBucket('bench');
  const checkpointDir = join(root, 'ckpt');
  const step = join(checkpointDir, 'global_step_100');
  await mkdir(join(step, 'actor'), { recursive: true });
  const block = randomBytes(8 * MiB);
  for (let i = 0; i < shards; i++)
    await fill(join(step, 'actor', `model_shard_${String(i).padStart(3, '0')}.pt`), shardBytes, block, i);
  for (let i = 0; i < smallFiles; i++)
    await writeFile(join(step, 'actor', `extra_${String(i).padStart(3, '0')}.bin`), randomBytes(MiB));
  await writeFile(join(checkpointDir, 'latest_checkpointed_iteration.txt'), '100\n');
  const bytes = shards * shardBytes + smallFiles * MiB;
  const ledgerPath = join(root, 'archive', 'checkpoints.json');
  const env = new MockActivityEnvironment();
  const hashed = (await env.run(createHashCheckpoints(), {
    checkpointDir,
    ledgerPath,
    now: 'bench',
  })) as HashCheckpointsResult;

  const store = { url: 's3://bench/ours', endpoint: s3.endpoint, region: 'us-east-1' };
  let start = process.hrtime.bigint();
  const ours = await uploadArchive({
    objectStore: store,
    storage: { checkpointDir, archiveDir: join(root, 'archive') },
    runDir: join(root, 'archive', 'none'),
    checkpoints: hashed.checkpoints,
    ledgerPath,
  });
  const oursSeconds = seconds(start);

  start = process.hrtime.bigint();
  await run(
    join(REPO_ROOT, '.venv', 'bin', 'aws'),
    [
      's3',
      'cp',
      '--recursive',
      '--only-show-errors',
      '--endpoint-url',
      s3.endpoint,
      step,
      's3://bench/awscli/global_step_100',
    ],
    { env: { ...process.env, AWS_DEFAULT_REGION: 'us-east-1' }, maxBuffer: 16 * MiB },
  );
  const awsSeconds = seconds(start);

  // Resume: the volume lost the checkpoint; the campaign fetches and verifies it.
  await rm(checkpointDir, { recursive: true, force: true });
  await mkdir(checkpointDir, { recursive: true });
  start = process.hrtime.bigint();
  const resumed = (await env.run(createLatestCompleteCheckpoint(), {
    checkpointDir,
    ledgerPath,
    now: 'bench',
  })) as LatestCheckpoint;
  const resumeSeconds = seconds(start);
  if (resumed.latest?.step !== 100) throw new Error(`resumed at ${resumed.latest?.step}, not 100`);

  const gbps = (s: number) => Math.round((bytes / s / 1e9) * 1000) / 1000;
  const numbers = {
    checkpoint: { bytes, files: shards + smallFiles, shards, shardBytes, smallFiles },
    server: 'SeaweedFS weed server -s3 (scripts/seaweedfs/versions.sh), loopback, one volume server',
    archiveUpload: {
      seconds: oursSeconds,
      gbPerSecond: gbps(oursSeconds),
      uploaded: ours.uploaded,
      partBytes: PART_BYTES,
      concurrency: CONCURRENCY,
    },
    awsCli: {
      seconds: awsSeconds,
      gbPerSecond: gbps(awsSeconds),
      command: 'aws s3 cp --recursive (awscli 1.46.3)',
    },
    ratio: Math.round((awsSeconds / oursSeconds) * 1000) / 1000,
    resumeFromStore: { seconds: resumeSeconds, gbPerSecond: gbps(resumeSeconds), step: resumed.latest.step },
  };
  console.log(JSON.stringify(numbers, null, 2));
  writeResults('object-store-upload', numbers);
} finally {
  await s3.stop();
  await rm(root, { recursive: true, force: true });
}
