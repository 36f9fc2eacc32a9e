import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sweepLimitsRefusal } from '../../src/domain/sweep-limits.js';

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
