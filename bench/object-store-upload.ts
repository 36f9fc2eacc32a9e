/**
 * Benchmark: copying a checkpoint to S3 and fetching it back, on a real SeaweedFS S3 server
 * (test/helpers/seaweedfs.ts, loopback). Writes a synthetic checkpoint (default 4 GiB: 48 shards of
 * 80 MiB plus 256 files of 1 MiB: bench/synthetic-checkpoint.ts), hashes it into a ledger as a campaign does, then in
 * one run: the archive's upload (uploadFile per file: multipart, SHA256 per part, the ledger's sha256
 * checked) against `aws s3 cp --recursive` (the AWS CLI from the venv) of the same folder to another
 * prefix, once with the CLI's default checksum (CRC32) and once with `--checksum-algorithm SHA256`; then the campaign's resume from the store: the volume emptied, latestCompleteCheckpoint
 * fetches and verifies the checkpoint. Both uploads find the files in the page cache; each timed
 * side starts after a `sync` (no write-back of the previous step's bytes in its time).
 * Shares the machine with whatever runs: its load is in the results file. Run it under the lock:
 * `flock /tmp/ray-tests.lock nice -n 5 npx tsx bench/object-store-upload.ts [GiB]`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createLatestCompleteCheckpoint } from '../src/activities/campaign/campaign-checkpoints.js';
import {
  createHashCheckpoints,
  type HashCheckpointsResult,
} from '../src/activities/checkpoints/hash-checkpoints.js';
import { uploadArchive } from '../src/activities/archive/archive-upload.js';
import type { LatestCheckpoint } from '../src/domain/campaign/campaign.js';
import { REPO_ROOT } from '../src/config/config.js';
import { CONCURRENCY, PART_BYTES } from '../src/activities/object-store/object-store-upload.js';
import { startSeaweedS3 } from '../test/helpers/seaweedfs.js';
import { writeResults } from './results.js';
import { writeSyntheticCheckpoint } from './synthetic-checkpoint.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/object-store-upload.ts',
  'bench/synthetic-checkpoint.ts',
  'src/activities/archive/archive-upload.ts',
  'src/activities/object-store/object-store-upload.ts',
  'src/activities/object-store/object-store-client.ts',
  'src/activities/object-store/object-store-fetch.ts',
  'src/activities/campaign/campaign-checkpoints.ts',
  'src/activities/checkpoints/hash-checkpoints.ts',
];

const run = promisify(execFile);
const gib = Number(process.argv[2] ?? 4);
const MiB = 1024 * 1024;

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

const s3 = await startSeaweedS3();
const root = await mkdtemp(join(tmpdir(), 'objstore-bench-'));
try {
  Object.assign(process.env, s3.env);
  await s3.createBucket('bench');
  const checkpointDir = join(root, 'ckpt');
  const checkpoint = await writeSyntheticCheckpoint(checkpointDir, 100, gib);
  const { bytes } = checkpoint;
  const ledgerPath = join(root, 'archive', 'checkpoints.json');
  const env = new MockActivityEnvironment();
  const hashed = (await env.run(createHashCheckpoints(), {
    checkpointDir,
    ledgerPath,
    now: 'bench',
  })) as HashCheckpointsResult;

  // Each side starts with nothing left to write back: the 4 GB just written (and each side's copy
  // in the server's volume) would otherwise flush to disk during the next side's timing.
  const settle = () => run('sync');
  const store = { url: 's3://bench/ours', endpoint: s3.endpoint, region: 'us-east-1' };
  await settle();
  let start = process.hrtime.bigint();
  const ours = await uploadArchive({
    objectStore: store,
    storage: { checkpointDir, archiveDir: join(root, 'archive') },
    runDir: join(root, 'archive', 'none'),
    checkpoints: hashed.checkpoints,
    ledgerPath,
  });
  const oursSeconds = seconds(start);

  // The AWS CLI as a user runs it (its default per-part checksum, CRC32), then with the per-part
  // SHA256 the archive's upload sends: the like-for-like side.
  const awsCopy = async (prefix: string, extra: string[] = []) => {
    await settle();
    const began = process.hrtime.bigint();
    await run(
      join(REPO_ROOT, '.venv', 'bin', 'aws'),
      [
        's3',
        'cp',
        '--recursive',
        '--only-show-errors',
        ...extra,
        '--endpoint-url',
        s3.endpoint,
        join(checkpointDir, 'global_step_100'),
        `s3://bench/${prefix}/global_step_100`,
      ],
      { env: { ...process.env, AWS_DEFAULT_REGION: 'us-east-1' }, maxBuffer: 16 * MiB },
    );
    return seconds(began);
  };
  const awsSeconds = await awsCopy('awscli');
  const awsSha256Seconds = await awsCopy('awscli-sha256', ['--checksum-algorithm', 'SHA256']);

  // Resume: the volume lost the checkpoint; the campaign fetches and verifies it.
  await rm(checkpointDir, { recursive: true, force: true });
  await mkdir(checkpointDir, { recursive: true });
  await settle();
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
    checkpoint,
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
    awsCliSha256: {
      seconds: awsSha256Seconds,
      gbPerSecond: gbps(awsSha256Seconds),
      command: 'aws s3 cp --recursive --checksum-algorithm SHA256 (awscli 1.46.3)',
    },
    ratio: Math.round((awsSeconds / oursSeconds) * 1000) / 1000,
    ratioToSha256: Math.round((awsSha256Seconds / oursSeconds) * 1000) / 1000,
    resumeFromStore: { seconds: resumeSeconds, gbPerSecond: gbps(resumeSeconds), step: resumed.latest.step },
  };
  console.log(JSON.stringify(numbers, null, 2));
  writeResults('object-store-upload', measuredCode, numbers);
} finally {
  await s3.stop();
  await rm(root, { recursive: true, force: true });
}
