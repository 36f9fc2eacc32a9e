import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { freePorts } from '../../src/backends/local/ports.js';
import { createArchive } from '../../src/activities/archive/archive.js';
import { createLatestCompleteCheckpoint } from '../../src/activities/campaign/campaign-checkpoints.js';
import { createHashCheckpoints } from '../../src/activities/checkpoints/hash-checkpoints.js';
import { openStore } from '../../src/activities/object-store/object-store-client.js';
import { objectStoreWritable } from '../../src/activities/object-store/object-store-preflight.js';
import { type UploadProgress, uploadFile } from '../../src/activities/object-store/object-store-upload.js';
import type { ObjectStore } from '../../src/domain/object-store/object-store.js';
import { ledgerPath, runCheckpointDir } from '../../src/domain/spec/paths.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { inActivityContext } from '../helpers/activity-context.js';
import { type S3TestServer, startSeaweedS3 } from '../helpers/seaweedfs.js';
import { succeededDraft, testSpec } from '../helpers/specs.js';

/** One real SeaweedFS S3 server for the file; the worker's environment holds its key. */
let s3: S3TestServer;
let admin: S3Client;
const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
const roots: string[] = [];

before(async () => {
  s3 = await startSeaweedS3();
  Object.assign(process.env, s3.env);
  admin = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
  });
});
after(async () => {
  admin?.destroy();
  await s3?.stop();
  for (const root of roots) await rm(root, { recursive: true, force: true });
  for (const [k, v] of [
    ['AWS_ACCESS_KEY_ID', saved.id],
    ['AWS_SECRET_ACCESS_KEY', saved.secret],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

const storeAt = (bucket: string, prefix = 'runs'): ObjectStore => ({
  url: `s3://${bucket}/${prefix}`,
  endpoint: s3.endpoint,
  region: 'us-east-1',
});

async function objectBytes(bucket: string, key: string): Promise<Buffer> {
  const got = await admin.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(
    await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  );
}

async function keys(bucket: string, prefix: string): Promise<string[]> {
  const listed = await admin.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((c) => c.Key ?? '').sort();
}

async function save(dir: string, step: number, bytes: number) {
  const folder = join(dir, `global_step_${step}`, 'actor');
  await mkdir(folder, { recursive: true });
  const body = Buffer.alloc(bytes, step % 251);
  body.write(`weights of step ${step}`);
  await writeFile(join(folder, 'model_world_size_1_rank_0.pt'), body);
  await writeFile(join(folder, 'extra_state.json'), JSON.stringify({ step }));
}

/** A run's storage with checkpoints 10, 20, 30 (tracker 30) and a spec copying to `bucket`. */
async function runWithCheckpoints(
  bucket: string,
  workflowId: string,
  retain?: ExperimentSpec['storage']['retain'],
) {
  const root = await mkdtemp(join(tmpdir(), 'objstore-'));
  roots.push(root);
  const base = testSpec({}, root);
  const spec: ExperimentSpec = {
    ...base,
    storage: { ...base.storage, objectStore: storeAt(bucket), ...(retain ? { retain } : {}) },
  };
  const checkpointDir = runCheckpointDir(spec.storage, spec.name, workflowId);
  for (const step of [10, 20, 30]) await save(checkpointDir, step, 6 * 1024 * 1024 + step);
  await writeFile(join(checkpointDir, 'latest_checkpointed_iteration.txt'), '30\n');
  const ledger = ledgerPath(spec.storage.archiveDir, spec.name, workflowId);
  return { root, spec, checkpointDir, ledger };
}

describe('object store (a real SeaweedFS S3 server)', () => {
  it('archive copies the archive folder and the checkpoints retain keeps, checksummed; a retry uploads nothing', async () => {
    await s3.createBucket('ragen-archive');
    const { spec, checkpointDir, ledger } = await runWithCheckpoints('ragen-archive', 'wf-archive', {
      latest: 2,
    });
    const { run: hash } = inActivityContext(createHashCheckpoints());
    const { checkpoints } = await hash({ checkpointDir, ledgerPath: ledger, now: 't1' });
    const draft = succeededDraft(spec, checkpointDir, 30, 'wf-archive');
    const { run: archive, heartbeats } = inActivityContext(createArchive());
    const first = await archive({ draft, archiveDir: spec.storage.archiveDir, checkpoints });
    assert.deepEqual(first.objectStore?.checkpointSteps, [20, 30], 'retain latest 2: steps 20 and 30');
    const stored = await keys('ragen-archive', 'runs/');
    const name = spec.name;
    assert.deepEqual(stored, [
      `runs/archive/${name}/wf-archive/checkpoints.json`,
      `runs/archive/${name}/wf-archive/manifest.json`,
      `runs/archive/${name}/wf-archive/manifest.json.sha256`,
      `runs/archive/${name}/wf-archive/object-store.json`,
      `runs/checkpoints/${name}/wf-archive/global_step_20/actor/extra_state.json`,
      `runs/checkpoints/${name}/wf-archive/global_step_20/actor/model_world_size_1_rank_0.pt`,
      `runs/checkpoints/${name}/wf-archive/global_step_30/actor/extra_state.json`,
      `runs/checkpoints/${name}/wf-archive/global_step_30/actor/model_world_size_1_rank_0.pt`,
    ]);
    // The ledger's sha256 is the stored object's, in its metadata and in its bytes.
    const shard = checkpoints.find((c) => c.step === 30)?.files.find((f) => f.path.endsWith('.pt'));
    const key = `runs/checkpoints/${name}/wf-archive/global_step_30/actor/model_world_size_1_rank_0.pt`;
    const head = await admin.send(new HeadObjectCommand({ Bucket: 'ragen-archive', Key: key }));
    assert.equal(head.Metadata?.sha256, shard?.sha256);
    assert.equal(
      createHash('sha256')
        .update(await objectBytes('ragen-archive', key))
        .digest('hex'),
      shard?.sha256,
    );
    const manifest = await readFile(first.manifestPath);
    assert.deepEqual(
      await objectBytes('ragen-archive', `runs/archive/${name}/wf-archive/manifest.json`),
      manifest,
    );
    assert.ok(heartbeats.length > 0, 'the upload heartbeats');

    const again = await archive({ draft, archiveDir: spec.storage.archiveDir, checkpoints });
    assert.equal(again.objectStore?.uploaded, 0, 'everything was there with the same sha256');
    assert.equal(again.objectStore?.present, stored.length);
  });

  it('a multipart upload cut off after some parts resumes from the heartbeated parts only', async () => {
    await s3.createBucket('ragen-resume');
    const store = openStore(storeAt('ragen-resume'));
    const dir = await mkdtemp(join(tmpdir(), 'objstore-part-'));
    const file = join(dir, 'shard.pt');
    const body = Buffer.alloc(26 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4096) body.writeUInt32LE(i, i);
    await writeFile(file, body);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const partBytes = 5 * 1024 * 1024; // 6 parts
    let last: UploadProgress | undefined;
    const died = new Error('the worker died');
    await assert.rejects(
      uploadFile(
        store,
        { key: 'big/shard.pt', file, sha256 },
        {
          partBytes,
          concurrency: 1,
          onProgress: (p) => {
            last = p;
            if (p.parts.length === 2) throw died;
          },
        },
      ),
      (err) => err === died,
    );
    assert.equal(last?.parts.length, 2);
    const sent: number[] = [];
    const outcome = await uploadFile(
      store,
      { key: 'big/shard.pt', file, sha256 },
      { partBytes, resume: last, onProgress: (p) => sent.push(p.parts.length) },
    );
    assert.equal(outcome, 'uploaded');
    assert.equal(sent.length, 4, 'only the 4 parts the store did not hold were sent');
    assert.equal(
      createHash('sha256')
        .update(await objectBytes('ragen-resume', 'big/shard.pt'))
        .digest('hex'),
      sha256,
    );
    assert.equal(await uploadFile(store, { key: 'big/shard.pt', file, sha256 }, { partBytes }), 'present');

    // A file that changed after it was hashed is never uploaded under the ledger's sha256.
    await assert.rejects(
      uploadFile(store, { key: 'big/changed.pt', file, sha256: '0'.repeat(64) }, { partBytes }),
      (err: Error) =>
        err.name === 'ObjectStoreChecksumMismatch' && /changed after it was hashed/.test(err.message),
    );
    store.client.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('a campaign whose checkpoint volume was replaced resumes from the object store at the right step', async () => {
    await s3.createBucket('ragen-campaign');
    const { spec, checkpointDir, ledger } = await runWithCheckpoints('ragen-campaign', 'campaign-1');
    const { run: find } = inActivityContext(createLatestCompleteCheckpoint());
    const before = await find({ checkpointDir, ledgerPath: ledger, now: 't1' });
    assert.equal(before.latest?.step, 30);
    const shard = join('global_step_30', 'actor', 'model_world_size_1_rank_0.pt');
    const original = await readFile(join(checkpointDir, shard));
    // The first attempt's archive copies the checkpoints (as a campaign attempt's archive does).
    const { uploadArchive } = await import('../../src/activities/archive/archive-upload.js');
    const { checkpoints } = await inActivityContext(createHashCheckpoints()).run({
      checkpointDir,
      ledgerPath: ledger,
      now: 't1',
    });
    await uploadArchive({
      objectStore: storeAt('ragen-campaign'),
      storage: spec.storage,
      runDir: join(spec.storage.archiveDir, spec.name, 'campaign-1-a1'),
      checkpoints,
      ledgerPath: ledger,
    });
    assert.deepEqual(
      await keys('ragen-campaign', `runs/archive/${spec.name}/campaign-1/`),
      [
        `runs/archive/${spec.name}/campaign-1/checkpoints.json`,
        `runs/archive/${spec.name}/campaign-1/object-store.json`,
      ],
      "the campaign's ledger and index, outside the attempt's folder, are copied too",
    );

    // A fresh volume: the campaign's checkpoint folder is empty on the next cluster.
    await rm(checkpointDir, { recursive: true, force: true });
    await mkdir(checkpointDir, { recursive: true });
    const { run: findAfter, heartbeats } = inActivityContext(createLatestCompleteCheckpoint());
    const resumed = await findAfter({ checkpointDir, ledgerPath: ledger, now: 't2' });
    assert.equal(resumed.latest?.step, 30, 'resumes at the step the lost volume held');
    assert.equal(resumed.latest?.path, join(checkpointDir, 'global_step_30'));
    assert.equal(resumed.latest?.sha256, before.latest?.sha256);
    assert.deepEqual(await readFile(join(checkpointDir, shard)), original);
    assert.ok(heartbeats.length >= 2, 'one heartbeat per fetched file');
    // The next attempt's check trusts the fetched files (the ledger has their times now).
    const next = await findAfter({ checkpointDir, ledgerPath: ledger, now: 't3' });
    assert.equal(next.latest?.step, 30);
    assert.deepEqual(next.untrusted, [], 'steps 10 and 20 are in the store, not lost');

    // Fresh storage for both: the archive dir lost the ledger and its index too (another cluster's
    // volume). The campaign's next check fetches them back, then the checkpoint.
    await rm(checkpointDir, { recursive: true, force: true });
    await mkdir(checkpointDir, { recursive: true });
    await rm(ledger);
    await rm(join(dirname(ledger), 'object-store.json'));
    const ledgerSource = { objectStore: storeAt('ragen-campaign'), archiveDir: spec.storage.archiveDir };
    const { run: hashAfter } = inActivityContext(createHashCheckpoints());
    await hashAfter({ checkpointDir, ledgerPath: ledger, now: 't3b', ledgerSource });
    const moved = await findAfter({ checkpointDir, ledgerPath: ledger, now: 't3c', ledgerSource });
    assert.equal(moved.latest?.step, 30, 'resumes at step 30 with the ledger fetched from the store');
    assert.equal(moved.latest?.sha256, before.latest?.sha256);
    assert.deepEqual(await readFile(join(checkpointDir, shard)), original);

    // Bytes in the store that are not the ledger's are never resumed from.
    await rm(checkpointDir, { recursive: true, force: true });
    const key = `runs/checkpoints/${spec.name}/campaign-1/global_step_30/actor/model_world_size_1_rank_0.pt`;
    await admin.send(new PutObjectCommand({ Bucket: 'ragen-campaign', Key: key, Body: 'tampered' }));
    await assert.rejects(
      findAfter({ checkpointDir, ledgerPath: ledger, now: 't4' }),
      (err: Error) => err.name === 'ObjectStoreChecksumMismatch' && /not resumed from/.test(err.message),
    );
    await assert.rejects(stat(join(checkpointDir, 'global_step_30')), 'no half-fetched checkpoint is left');
  });

  describe('preflight refuses a store it cannot write, naming the setting and the fix', () => {
    const refused = (pattern: RegExp) => (err: Error) => {
      assert.equal(err.name, 'ObjectStoreUnusable');
      assert.match(err.message, pattern);
      return true;
    };

    it('an unreachable endpoint', async () => {
      const [port] = (await freePorts(1)) as [number];
      await assert.rejects(
        objectStoreWritable({ ...storeAt('ragen-archive'), endpoint: `http://127.0.0.1:${port}` }),
        refused(
          /storage\.objectStore\.endpoint .* is unreachable .*start the S3 server or correct storage\.objectStore\.endpoint/,
        ),
      );
    });

    it('a missing bucket', async () => {
      await assert.rejects(
        objectStoreWritable(storeAt('no-such-bucket')),
        refused(
          /storage\.objectStore\.url .*bucket no-such-bucket does not exist.*create it \(aws s3 mb s3:\/\/no-such-bucket\)/,
        ),
      );
    });

    it('wrong credentials', async () => {
      process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
      try {
        await assert.rejects(
          objectStoreWritable(storeAt('ragen-archive')),
          refused(/refused the worker's credentials .*set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/),
        );
      } finally {
        Object.assign(process.env, s3.env);
      }
    });

    it('a bucket over its quota', async () => {
      await s3.createBucket('ragen-full');
      await admin.send(
        new PutObjectCommand({ Bucket: 'ragen-full', Key: 'filler', Body: Buffer.alloc(3 * 1024 * 1024, 1) }),
      );
      await s3.shell('s3.bucket.quota -name=ragen-full -op=set -sizeMB=1');
      // The quota is enforced from the volume servers' reported sizes, which lag the write a little.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const out = await s3.shell('s3.bucket.quota.enforce -apply');
        if (/read.?only/i.test(out)) break;
        if (Date.now() > deadline) assert.fail(`the quota was never enforced: ${out}`);
        await new Promise((r) => setTimeout(r, 2000));
      }
      await assert.rejects(
        objectStoreWritable(storeAt('ragen-full')),
        refused(/full \(over its quota\) or read-only; raise the bucket's quota/),
      );
      assert.ok((await objectStoreWritable(storeAt('ragen-archive'))).ok, 'a bucket with room passes');
    });
  });
});
