import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type LimitsInForce,
  type SweepLimitChange,
  type SweepLimits,
  changedLimits,
  failureBudgetExhausted,
  limitsInForce,
  sweepLimitsRefusal,
} from '../../src/domain/sweep/sweep-limits.js';

describe('sweep limits (the setLimits Update validator, pure)', () => {
  const running = { done: false, failed: 2 };
  it('accepts a concurrency and/or a budget above the failures so far', () => {
    assert.equal(sweepLimitsRefusal({ concurrency: 4 }, running), undefined);
    assert.equal(sweepLimitsRefusal({ failureBudget: 3 }, running), undefined);
    assert.equal(sweepLimitsRefusal({ concurrency: 1, failureBudget: 5 }, running), undefined);
  });
  it('refuses bad values naming the field and the allowed range', () => {
    assert.match(sweepLimitsRefusal({ concurrency: 0 }, running) ?? '', /^concurrency: .*from 1 to 256/);
    assert.match(sweepLimitsRefusal({ concurrency: 2.5 }, running) ?? '', /^concurrency: /);
    assert.match(sweepLimitsRefusal({ failureBudget: -1 }, running) ?? '', /^failureBudget: .*at least 1/);
    assert.match(sweepLimitsRefusal({ concurrncy: 2 }, running) ?? '', /concurrncy/);
    assert.match(sweepLimitsRefusal({}, running) ?? '', /nothing to change/);
  });
  it('refuses a budget that would end the sweep at once, and any change once every child started', () => {
    assert.match(
      sweepLimitsRefusal({ failureBudget: 2 }, running) ?? '',
      /2 children have failed already; failureBudget 2 would stop the sweep at once/,
    );
    assert.match(
      sweepLimitsRefusal({ concurrency: 2 }, { done: true, failed: 0 }) ?? '',
      /finished starting/,
    );
  });
});

describe('sweep limits in force (pure, table)', () => {
  const spec = { concurrency: 2, failureBudget: 3 };
  const change = (concurrency: number, failureBudget?: number) => ({ at: 't', concurrency, failureBudget });
  const inForce: [
    string,
    { concurrency: number; failureBudget?: number },
    SweepLimitChange[],
    LimitsInForce,
  ][] = [
    ['no change: the spec', spec, [], { concurrency: 2, failureBudget: 3 }],
    [
      'no change, no budget in the spec',
      { concurrency: 1 },
      [],
      { concurrency: 1, failureBudget: undefined },
    ],
    ['the last change wins', spec, [change(5, 4), change(1, 6)], { concurrency: 1, failureBudget: 6 }],
    [
      'a change recorded without a budget: none',
      spec,
      [change(4)],
      { concurrency: 4, failureBudget: undefined },
    ],
  ];
  for (const [why, s, changes, expected] of inForce) {
    it(`limits in force: ${why}`, () => {
      assert.deepEqual(limitsInForce(s, changes), expected);
    });
  }

  const changed: [string, LimitsInForce, SweepLimits, LimitsInForce][] = [
    [
      'concurrency only keeps the budget',
      { concurrency: 1, failureBudget: 2 },
      { concurrency: 3 },
      { concurrency: 3, failureBudget: 2 },
    ],
    [
      'budget only keeps the concurrency',
      { concurrency: 1, failureBudget: 2 },
      { failureBudget: 5 },
      { concurrency: 1, failureBudget: 5 },
    ],
    [
      'both change',
      { concurrency: 1 },
      { concurrency: 2, failureBudget: 1 },
      { concurrency: 2, failureBudget: 1 },
    ],
    [
      'no budget stays none',
      { concurrency: 1 },
      { concurrency: 2 },
      { concurrency: 2, failureBudget: undefined },
    ],
  ];
  for (const [why, current, asked, expected] of changed) {
    it(`after sweep set: ${why}`, () => {
      assert.deepEqual(changedLimits(current, asked), expected);
    });
  }

  const exhausted: [number, number | undefined, boolean][] = [
    [0, undefined, false],
    [100, undefined, false],
    [1, 2, false],
    [2, 2, true],
    [3, 2, true],
  ];
  for (const [failed, budget, expected] of exhausted) {
    it(`${failed} failed with failureBudget ${budget}: ${expected ? 'exhausted' : 'not exhausted'}`, () => {
      assert.equal(failureBudgetExhausted(failed, budget), expected);
    });
  }
});
