import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetainSchema, retentionPlan } from '../../src/domain/checkpoints/retention.js';

const ckpts = (...steps: number[]) =>
  steps.map((step) => ({ step, path: `/c/global_step_${step}`, sha256: `h${step}` }));
const deleted = (plan: ReturnType<typeof retentionPlan>) => plan.delete.map((d) => d.step);

describe('checkpoint retention rule (pure)', () => {
  const all = ckpts(10, 20, 30, 40, 50, 60);

  it('keeps the latest N, every S, and never a protected step', () => {
    const plan = retentionPlan(all, { latest: 2 }, [{ step: 10, why: 'the resume candidate' }]);
    assert.deepEqual(deleted(plan), [20, 30, 40]);
    assert.deepEqual(plan.keep.find((k) => k.step === 10)?.why, ['the resume candidate']);
    assert.match(plan.delete[0]?.why ?? '', /storage.retain: not among the latest 2/);
    assert.equal(plan.delete[0]?.sha256, 'h20', 'the hash travels to the ledger record');
    assert.deepEqual(deleted(retentionPlan(all, { latest: 1, every: 20 }, [])), [10, 30, 50]);
  });

  it('keeps the best K by a metric (ties to the later step) and anything it cannot rank', () => {
    const values = { 10: 0.5, 20: 0.9, 30: 0.7, 40: 0.9, 60: 0.1 };
    const retain = RetainSchema.parse({ best: { count: 2, metric: 'val-env/CoordSokoban/success' } });
    const plan = retentionPlan(all, retain, [], values);
    // best 2: 40 (0.9, later of the tie) and 20 (0.9); 50 has no value → kept
    assert.deepEqual(deleted(plan), [10, 30, 60]);
    assert.match(
      plan.keep.find((k) => k.step === 50)?.why[0] ?? '',
      /no val-env\/CoordSokoban\/success value/,
    );
    const min = RetainSchema.parse({ best: { count: 1, metric: 'loss', mode: 'min' } });
    assert.deepEqual(deleted(retentionPlan(all, min, [], values)), [10, 20, 30, 40]);
  });

  it('combines rules (kept when any rule keeps it) and deletes nothing when every rule keeps all', () => {
    assert.deepEqual(deleted(retentionPlan(all, { latest: 10 }, [])), []);
    const plan = retentionPlan(
      all,
      { latest: 1, every: 30, best: { count: 1, metric: 'm', mode: 'max' } },
      [],
      {
        10: 1,
        20: 0,
        30: 0,
        40: 0,
        50: 0,
        60: 0,
      },
    );
    assert.deepEqual(deleted(plan), [20, 40, 50]);
  });

  it('refuses an empty retain block with the fix', () => {
    const r = RetainSchema.safeParse({});
    assert.equal(r.success, false);
    assert.match(r.error?.issues[0]?.message ?? '', /leave retain out to keep every checkpoint/);
  });
});
