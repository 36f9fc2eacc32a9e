import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLatestCompleteCheckpoint } from '../../src/activities/campaign/campaign-checkpoints.js';
import { createApplyCheckpointRetention } from '../../src/activities/checkpoints/checkpoint-retention.js';
import { CheckpointLedgerSchema } from '../../src/domain/campaign/campaign.js';
import { inActivityContext } from '../helpers/activity-context.js';

async function save(dir: string, step: number) {
  await mkdir(join(dir, `global_step_${step}`, 'actor'), { recursive: true });
  await writeFile(join(dir, `global_step_${step}`, 'actor', 'model.npz'), `weights ${step}`);
}

async function campaignDir(steps: number[], tracker: number) {
  const root = await mkdtemp(join(tmpdir(), 'retain-'));
  const dir = join(root, 'ckpt');
  const ledgerPath = join(root, 'archive', 'checkpoints.json');
  for (const s of steps) await save(dir, s);
  await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), `${tracker}\n`);
  return { root, dir, ledgerPath };
}

const globalSteps = async (dir: string) =>
  (await readdir(dir)).filter((n) => n.startsWith('global_step_') || n.startsWith('.deleting')).sort();

describe('applyCheckpointRetention (real files)', () => {
  it('deletes only hashed, complete checkpoints the rule does not keep, and records each in the ledger', async () => {
    const { dir, ledgerPath } = await campaignDir([10, 20, 30, 40], 30); // 40: past the tracker
    const find = inActivityContext(createLatestCompleteCheckpoint()).run;
    const latest = await find({ checkpointDir: dir, ledgerPath, now: 't1' }); // hashes 10, 20, 30
    assert.equal(latest.latest?.step, 30);
    const retain = createApplyCheckpointRetention();
    const r = await retain({
      checkpointDir: dir,
      ledgerPath,
      retain: { latest: 1 },
      protect: [{ step: 10, why: 'validated by attempt 1' }],
      metricsSeriesPaths: [],
      now: 't2',
    });
    assert.deepEqual(
      r.deleted.map((d) => [d.step, d.why]),
      [[20, 'storage.retain: not among the latest 1']],
    );
    assert.deepEqual(await globalSteps(dir), ['global_step_10', 'global_step_30', 'global_step_40']);
    const ledger = CheckpointLedgerSchema.parse(JSON.parse(await readFile(ledgerPath, 'utf8')));
    assert.deepEqual(
      ledger.deleted?.map((d) => [d.step, d.path, d.deletedAt]),
      [[20, join(dir, 'global_step_20'), 't2']],
    );
    assert.equal(ledger.deleted?.[0]?.sha256, ledger.checkpoints.find((c) => c.step === 20)?.sha256);
    // The deleted one is not "untrusted" afterwards, and the resume candidate is unchanged.
    const after = await find({ checkpointDir: dir, ledgerPath, now: 't3' });
    assert.equal(after.latest?.step, 30);
    assert.deepEqual(after.untrusted, []);
    // Idempotent: a second pass deletes nothing more.
    const again = await retain({
      checkpointDir: dir,
      ledgerPath,
      retain: { latest: 1 },
      protect: [
        { step: 10, why: 'validated' },
        { step: 30, why: 'the resume candidate' },
      ],
      metricsSeriesPaths: [],
      now: 't4',
    });
    assert.deepEqual(again.deleted, []);
  });

  it('a worker killed mid-deletion leaves no global_step_N a resume could pick; the retry finishes and records it', async () => {
    const { dir, ledgerPath } = await campaignDir([10, 20, 30], 30);
    const find = inActivityContext(createLatestCompleteCheckpoint()).run;
    await find({ checkpointDir: dir, ledgerPath, now: 't1' });
    // The state a kill between the rename and the ledger write leaves (files half removed).
    await rename(join(dir, 'global_step_20'), join(dir, '.deleting-global_step_20'));
    const between = await find({ checkpointDir: dir, ledgerPath, now: 't2' });
    assert.equal(between.latest?.step, 30, 'the resume candidate is whole');
    assert.ok(!between.checkpoints.some((c) => c.step === 20 && between.latest?.step === 20));
    const r = await createApplyCheckpointRetention()({
      checkpointDir: dir,
      ledgerPath,
      retain: { latest: 2 },
      protect: [{ step: 30, why: 'the resume candidate' }],
      metricsSeriesPaths: [],
      now: 't3',
    });
    assert.deepEqual(r.deleted, [], 'nothing else to delete: 10 and 30 are the latest 2 left');
    assert.deepEqual(await globalSteps(dir), ['global_step_10', 'global_step_30']);
    const ledger = CheckpointLedgerSchema.parse(JSON.parse(await readFile(ledgerPath, 'utf8')));
    assert.deepEqual(
      ledger.deleted?.map((d) => [d.step, d.why]),
      [[20, 'storage.retain (an interrupted deletion, finished on retry)']],
    );
  });

  it('keeps the best by a metric from the attempts’ metrics series, and what it cannot rank', async () => {
    const { root, dir, ledgerPath } = await campaignDir([10, 20, 30, 40], 40);
    await inActivityContext(createLatestCompleteCheckpoint()).run({
      checkpointDir: dir,
      ledgerPath,
      now: 't1',
    });
    const series = join(root, 'metrics-series.json');
    const point = (step: number, v: number) => ({ step, values: { 'val-env/A/success': v } });
    await writeFile(
      series,
      JSON.stringify({
        schemaVersion: 1,
        maxPoints: 100,
        stride: 1,
        points: [point(10, 0.9), point(20, 0.1), point(30, 0.2)],
      }),
    );
    const r = await createApplyCheckpointRetention()({
      checkpointDir: dir,
      ledgerPath,
      retain: { best: { count: 1, metric: 'val-env/A/success', mode: 'max' } },
      protect: [{ step: 40, why: 'the resume candidate' }],
      metricsSeriesPaths: [series, join(root, 'missing.json')],
      now: 't2',
    });
    assert.deepEqual(
      r.deleted.map((d) => d.step),
      [20, 30],
    );
    assert.deepEqual(await globalSteps(dir), ['global_step_10', 'global_step_40']);
  });
});
