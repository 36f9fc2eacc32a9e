import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExperimentResultSchema } from '../../src/domain/run/experiment-input.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { withPrunedName } from '../../src/domain/run/pruned-name.js';
import { ChildOutcomeSchema } from '../../src/domain/sweep/sweep.js';

describe('withPrunedName: 1.0 data read with the name pruned', () => {
  it('renames the outcome and the reason of a run a scheduler stopped', () => {
    const old = { outcome: 'stoppedEarly', stoppedEarly: { rung: 2, step: 4, reason: 'asha rung 2' }, x: 1 };
    assert.deepEqual(withPrunedName(old), {
      outcome: 'pruned',
      pruned: { rung: 2, step: 4, reason: 'asha rung 2' },
      x: 1,
    });
  });

  it("leaves the trainer's own earlyStopped alone", () => {
    const trainer = { outcome: 'earlyStopped', training: { earlyStopped: { step: 3, reasons: ['low'] } } };
    assert.deepEqual(withPrunedName(trainer), trainer);
  });

  it("renames a sweep's children, carried results and counts", () => {
    const sweep = {
      counts: { succeeded: 1, stoppedEarly: 2 },
      children: [{ outcome: 'stoppedEarly', stoppedEarly: { rung: 1, reason: 'r' } }],
      carry: { results: [{ outcome: 'stoppedEarly' }, { outcome: 'succeeded' }] },
    };
    assert.deepEqual(withPrunedName(sweep), {
      counts: { succeeded: 1, pruned: 2 },
      children: [{ outcome: 'pruned', pruned: { rung: 1, reason: 'r' } }],
      carry: { results: [{ outcome: 'pruned' }, { outcome: 'succeeded' }] },
    });
  });

  it('the schemas refuse the 1.0 names, so old data must come through it', () => {
    assert.equal(ExperimentResultSchema.shape.outcome.safeParse('stoppedEarly').success, false);
    assert.equal(ManifestSchema.shape.outcome.safeParse('pruned').success, true);
    assert.equal(ChildOutcomeSchema.shape.outcome.safeParse('stoppedEarly').success, false);
  });
});
