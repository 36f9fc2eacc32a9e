/**
 * A worker killed (SIGKILL, a real process) in the middle of deleting a checkpoint that
 * storage.retain does not keep: no half-deleted `global_step_N` is left for a resume to pick, the
 * resume candidate is unchanged and whole, and the next pass finishes the deletion and records it
 * once. No Ray, no Temporal: the activity's own process and real files (about 5 s).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLatestCompleteCheckpoint } from '../../src/activities/campaign/campaign-checkpoints.js';
import { createApplyCheckpointRetention } from '../../src/activities/checkpoints/checkpoint-retention.js';
import type { RetentionInput } from '../../src/activities/checkpoints/checkpoint-retention.js';
import { checkpointSteps, hashCheckpoint } from '../../src/activities/checkpoints/checkpoints.js';
import { CheckpointLedgerSchema } from '../../src/domain/campaign/campaign.js';
import { REPO_ROOT } from '../../src/config/config.js';
import { inActivityContext } from '../helpers/activity-context.js';

// Enough entries that removing them takes a while (8,000 folders): the kill lands inside it.
const SHARDS = 40;
const ENTRIES_PER_SHARD = 200;
const roots: string[] = [];
after(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

async function save(dir: string, step: number, shards: number): Promise<void> {
  const actor = join(dir, `global_step_${step}`, 'actor');
  await mkdir(actor, { recursive: true });
  await writeFile(join(actor, 'model_world_size_1_rank_0.npz'), `weights ${step}`);
  for (let s = 0; s < shards; s++) {
    const shard = join(dir, `global_step_${step}`, `shard_${s}`);
    await mkdir(shard, { recursive: true });
    writeFileSync(join(shard, 'part'), `${step}/${s}`);
    // Empty folders: slow to remove one by one, free to hash (hashing reads files only).
    for (let f = 0; f < ENTRIES_PER_SHARD; f++) mkdirSync(join(shard, `d_${f}`));
  }
}

/** Runs the activity in its own process and SIGKILLs it once a shard of `tombstone` is gone. */
function killMidDeletion(input: RetentionInput, tombstone: string): Promise<{ shardsLeft: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'test/helpers/retention-process.ts'), JSON.stringify(input)],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let shardsLeft = -1;
    const poll = setInterval(() => {
      let left: number;
      try {
        left = readdirSync(tombstone).length;
      } catch {
        return; // not renamed yet
      }
      if (left < SHARDS + 1) {
        child.kill('SIGKILL');
        shardsLeft = left;
        clearInterval(poll);
      }
    }, 2);
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      if (signal === 'SIGKILL') resolve({ shardsLeft });
      else reject(new Error(`the activity ended (code ${code}) before the kill landed\n${stderr}`));
    });
  });
}

describe('fault: the worker killed during a checkpoint deletion (real process, real files)', () => {
  it('leaves no half-deleted global_step_N; the resume candidate is whole; the next pass finishes and records it', async () => {
    let t = Date.now();
    const root = await mkdtemp(join(tmpdir(), 'retain-kill-'));
    roots.push(root);
    const dir = join(root, 'ckpt');
    const ledgerPath = join(root, 'archive', 'checkpoints.json');
    await save(dir, 10, 1);
    await save(dir, 20, SHARDS);
    await save(dir, 30, 1);
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '30\n');
    console.log(`[fault numbers] setup ${Date.now() - t} ms`);
    t = Date.now();
    const find = inActivityContext(createLatestCompleteCheckpoint()).run;
    const before = await find({ checkpointDir: dir, ledgerPath, now: 't1' });
    assert.equal(before.latest?.step, 30);
    console.log(`[fault numbers] hashing ${Date.now() - t} ms`);
    const kept = { 10: await hashCheckpoint(dir, 10), 30: await hashCheckpoint(dir, 30) };

    const input: RetentionInput = {
      checkpointDir: dir,
      ledgerPath,
      retain: { latest: 1 },
      protect: [
        { step: 30, why: 'the resume candidate' },
        { step: 10, why: 'validated by attempt 1' },
      ],
      metricsSeriesPaths: [],
      now: 't2',
    };
    const tombstone = join(dir, '.deleting-global_step_20');
    const t0 = Date.now();
    const { shardsLeft } = await killMidDeletion(input, tombstone);
    console.log(
      `[fault numbers] killed with ${shardsLeft} of ${SHARDS + 1} entries of step 20 left, ${Date.now() - t0} ms`,
    );
    assert.ok(shardsLeft > 0, 'killed in the middle of removing the files');

    // What a resume sees: only whole checkpoints under their real names.
    assert.deepEqual(await checkpointSteps(dir), [10, 30]);
    assert.ok(
      (await readdir(dir)).includes('.deleting-global_step_20'),
      'the half-deleted one is a tombstone',
    );
    const between = await find({ checkpointDir: dir, ledgerPath, now: 't3' });
    assert.equal(between.latest?.step, 30, 'the resume candidate is the same');
    assert.equal(between.latest?.sha256, kept[30].sha256);
    assert.deepEqual((await hashCheckpoint(dir, 10)).sha256, kept[10].sha256);

    // The retry (Temporal retries the activity on another worker) finishes and records it once.
    const again = await createApplyCheckpointRetention()({ ...input, now: 't4' });
    assert.deepEqual(again.deleted, []);
    assert.deepEqual((await readdir(dir)).filter((n) => n.includes('global_step_')).sort(), [
      'global_step_10',
      'global_step_30',
    ]);
    const ledger = CheckpointLedgerSchema.parse(JSON.parse(await readFile(ledgerPath, 'utf8')));
    assert.deepEqual(
      ledger.deleted?.map((d) => d.step),
      [20],
    );
    assert.equal(ledger.deleted?.[0]?.sha256, before.checkpoints.find((c) => c.step === 20)?.sha256);
    const after = await find({ checkpointDir: dir, ledgerPath, now: 't5' });
    assert.equal(after.latest?.step, 30);
    assert.deepEqual(after.untrusted, []);
  });
});
