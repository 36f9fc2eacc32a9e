import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePorts } from '../../src/backends/local/ports.js';
import { REPO_ROOT } from '../../src/config/config.js';
import { readShellVersions } from './temporal-versions.js';

/** scripts/seaweedfs/versions.sh: where scripts/seaweedfs/build.sh put `weed`. */
export function weedBinary(): string {
  const v = readShellVersions(join(REPO_ROOT, 'scripts/seaweedfs/versions.sh'));
  const cache = process.env.RAGEN_CACHE ?? join(homedir(), '.cache/ragen-orchestrator');
  const bin = join(cache, 'seaweedfs', `seaweedfs-${v.SEAWEEDFS_VERSION}`, 'bin', 'weed');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run bash scripts/seaweedfs/build.sh`);
  return bin;
}

export interface S3TestServer {
  /** http://127.0.0.1:<port> of the S3 gateway. */
  endpoint: string;
  /** An identity allowed everything (Admin, Read, Write, List). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The worker environment that makes the SDK's default chain find `credentials`. */
  env: Record<string, string>;
  dir: string;
  createBucket(name: string): Promise<void>;
  /** A `weed shell` command against this server's master (s3.bucket.quota, fs.configure...). */
  shell(command: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A real SeaweedFS (`weed server -filer -s3`: master, volume server, filer and S3 gateway in one
 * process) on free loopback ports with its data in a temp dir, and an S3 identities config so
 * requests are SigV4-authenticated as on AWS (unknown keys are refused). Runs in its own process
 * group, stopped as a whole; the temp dir is removed.
 */
export async function startSeaweedS3(): Promise<S3TestServer> {
  const weed = weedBinary();
  const dir = await mkdtemp(join(tmpdir(), 'seaweedfs-'));
  const credentials = { accessKeyId: 'ragen-test-admin', secretAccessKey: 'ragen-test-secret-key' };
  await mkdir(join(dir, 'data'));
  const config = join(dir, 's3.json');
  await writeFile(
    config,
    JSON.stringify({
      identities: [
        {
          name: 'ragen-test',
          credentials: [{ accessKey: credentials.accessKeyId, secretKey: credentials.secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = (await freePorts(8)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const child: ChildProcess = spawn(
    weed,
    [
      'server',
      '-ip=127.0.0.1',
      `-dir=${join(dir, 'data')}`,
      `-master.port=${master}`,
      `-master.port.grpc=${masterGrpc}`,
      '-master.telemetry=false',
      // Small volumes: the test machine's disk, not a production cluster's.
      '-master.volumeSizeLimitMB=1024',
      '-volume.max=0',
      `-volume.port=${volume}`,
      `-volume.port.grpc=${volumeGrpc}`,
      '-filer',
      `-filer.port=${filer}`,
      `-filer.port.grpc=${filerGrpc}`,
      `-filer.localSocket=${join(dir, 'filer.sock')}`,
      '-s3',
      `-s3.port=${s3}`,
      `-s3.port.grpc=${s3Grpc}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-s3.localSocket=${join(dir, 's3.sock')}`,
      `-s3.config=${config}`,
      // As on AWS: a write to a bucket that does not exist fails (SeaweedFS would create it).
      '-s3.autoCreateBucket=false',
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], cwd: dir },
  );
  let log = '';
  const keep = (d: Buffer) => {
    log = (log + d.toString()).slice(-6000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const endpoint = `http://127.0.0.1:${s3}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
    // weed puts its local gRPC sockets in /tmp whatever -dir says: removed with the server.
    for (const [kind, port] of [
      ['master', masterGrpc],
      ['volume', volumeGrpc],
      ['filer', filerGrpc],
      ['s3', s3Grpc],
    ] as const)
      await rm(`/tmp/seaweedfs-${kind}-grpc-${port}.sock`, { force: true });
  };
  const client = () =>
    new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials, maxAttempts: 1 });
  const createBucket = async (name: string) => {
    const c = client();
    try {
      await c.send(new CreateBucketCommand({ Bucket: name }));
    } finally {
      c.destroy();
    }
  };
  const shell = (command: string) =>
    new Promise<string>((resolve, reject) => {
      // weed shell reads its commands from stdin.
      const sh = spawn(weed, ['shell', `-master=127.0.0.1:${master}.${masterGrpc}`], { cwd: dir });
      let out = '';
      sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
      sh.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => sh.kill('SIGKILL'), 60_000);
      sh.once('error', reject);
      sh.once('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else reject(new Error(`weed shell ${command} exited ${code}: ${out}`));
      });
      sh.stdin.end(`${command}\nexit\n`);
    });
  // Ready when a bucket can be created: master, volume, filer and gateway all answer then.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`weed server exited ${child.exitCode}: ${log}`);
    }
    const ok = await createBucket('ragen-ready').then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`SeaweedFS's S3 gateway did not answer on ${endpoint}: ${log}`);
    }
    await sleep(500);
  }
  return {
    endpoint,
    credentials,
    env: {
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    dir,
    createBucket,
    shell,
    stop,
  };
}
