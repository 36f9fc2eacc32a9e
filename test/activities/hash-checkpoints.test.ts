import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createHashCheckpoints,
  type HashCheckpointsResult,
  type HashHeartbeat,
} from '../../src/activities/checkpoints/hash-checkpoints.js';
import {
  createLatestCompleteCheckpoint,
  readLedger,
} from '../../src/activities/campaign/campaign-checkpoints.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

async function checkpoint(dir: string, step: number, files: Record<string, string>) {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, `global_step_${step}`, rel, '..'), { recursive: true });
    await writeFile(join(dir, `global_step_${step}`, rel), content);
  }
}

describe('hashCheckpoints activity (MockActivityEnvironment, real files)', () => {
  it('hashes each complete checkpoint once into the ledger, heartbeating per file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'hash-'));
    const dir = join(root, 'ckpt');
    const ledgerPath = join(root, 'archive', 'checkpoints.json');
    await checkpoint(dir, 10, { 'actor/model.pt': 'm10', 'actor/optim.pt': 'o10', 'critic/model.pt': 'c10' });
    await checkpoint(dir, 20, { 'actor/model.pt': 'm20' });
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '10');
    const env = new MockActivityEnvironment();
    const beats: HashHeartbeat[] = [];
    env.on('heartbeat', (d: HashHeartbeat) => beats.push(structuredClone(d)));
    const first = (await env.run(createHashCheckpoints(), {
      checkpointDir: dir,
      ledgerPath,
      now: 't1',
    })) as HashCheckpointsResult;
    assert.deepEqual(first.hashed, [10], 'step 20 is past the tracker: not complete yet');
    assert.deepEqual(
      first.checkpoints[0]?.files.map((f) => [f.path, f.sha256]),
      [
        ['actor/model.pt', sha('m10')],
        ['actor/optim.pt', sha('o10')],
        ['critic/model.pt', sha('c10')],
      ],
    );
    assert.deepEqual(
      beats.map((b) => b.files.length),
      [1, 2, 3],
      'one heartbeat per file',
    );

    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
    const second = (await new MockActivityEnvironment().run(createHashCheckpoints(), {
      checkpointDir: dir,
      ledgerPath,
      now: 't2',
    })) as HashCheckpointsResult;
    assert.deepEqual(second.hashed, [20], 'step 10 is in the ledger: not hashed again');
    const ledger = await readLedger(ledgerPath);
    assert.deepEqual(
      ledger.checkpoints.map((c) => [c.step, c.firstSeenAt]),
      [
        [10, 't1'],
        [20, 't2'],
      ],
    );
    await rm(root, { recursive: true, force: true });
  });

  it('resumes from its heartbeat after a worker crash: files already hashed are not read again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'hash-'));
    const dir = join(root, 'ckpt');
    const ledgerPath = join(root, 'checkpoints.json');
    await checkpoint(dir, 5, { 'a.pt': 'aaa', 'b.pt': 'bbb', 'c.pt': 'ccc' });
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '5');
    // A first run hashes a.pt and b.pt and its worker dies; its last heartbeat carries both. The
    // recorded hash of a.pt is a sentinel: if the retry read a.pt again, the ledger would not show it.
    const probe = new MockActivityEnvironment();
    const beats: HashHeartbeat[] = [];
    probe.on('heartbeat', (d: HashHeartbeat) => beats.push(structuredClone(d)));
    await probe.run(createHashCheckpoints(), {
      checkpointDir: dir,
      ledgerPath: join(root, 'probe.json'),
      now: 't0',
    });
    const crashed = beats[1];
    assert.ok(crashed && crashed.files.length === 2);
    crashed.files[0] = { ...crashed.files[0]!, sha256: 'sentinel-from-heartbeat' };
    await writeFile(join(dir, 'global_step_5', 'b.pt'), 'BBBB'); // changed after it was hashed: must be read again

    const env = new MockActivityEnvironment({ heartbeatDetails: crashed });
    await env.run(createHashCheckpoints(), { checkpointDir: dir, ledgerPath, now: 't1' });
    const [entry] = (await readLedger(ledgerPath)).checkpoints;
    assert.deepEqual(
      entry?.files.map((f) => [f.path, f.sha256]),
      [
        ['a.pt', 'sentinel-from-heartbeat'],
        ['b.pt', sha('BBBB')],
        ['c.pt', sha('ccc')],
      ],
    );
    await rm(root, { recursive: true, force: true });
  });

  it('latestCompleteCheckpoint then reuses the ledger: it does not read the files again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'hash-'));
    const dir = join(root, 'ckpt');
    const ledgerPath = join(root, 'checkpoints.json');
    await checkpoint(dir, 10, { 'actor/model.pt': 'weights' });
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '10');
    await new MockActivityEnvironment().run(createHashCheckpoints(), {
      checkpointDir: dir,
      ledgerPath,
      now: 't1',
    });
    // Same size and mtime, different hash in the ledger: only a re-read could notice, and none happens.
    const ledger = JSON.parse(await readFile(ledgerPath, 'utf8')) as { checkpoints: { sha256: string }[] };
    ledger.checkpoints[0]!.sha256 = 'ledger-hash';
    await writeFile(ledgerPath, JSON.stringify(ledger));
    const found = await createLatestCompleteCheckpoint()({ checkpointDir: dir, ledgerPath, now: 't2' });
    assert.deepEqual(found.latest, { step: 10, path: join(dir, 'global_step_10'), sha256: 'ledger-hash' });
    await rm(root, { recursive: true, force: true });
  });
});
