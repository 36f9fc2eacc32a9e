import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addPoint,
  emptySeries,
  metricMode,
  updateSummary,
} from '../../src/domain/train/metrics-downsample.js';
import { MetricsSeriesSchema } from '../../src/domain/train/metrics-series.js';

describe('bounded metrics series', () => {
  it('keeps the first and last step, at most maxPoints, on a doubling stride', () => {
    let series = emptySeries(10);
    for (let step = 1; step <= 1000; step++) {
      series = addPoint(series, { step, values: { r: step } });
      assert.ok(series.points.length <= 10, `step ${step}: ${series.points.length} points`);
    }
    const steps = series.points.map((p) => p.step);
    assert.equal(steps[0], 1, 'first step kept');
    assert.equal(steps.at(-1), 1000, 'last step kept');
    assert.equal(series.stride, 128);
    for (const s of steps.slice(1, -1)) assert.equal(s % series.stride, 0, `${s} is on the stride`);
    MetricsSeriesSchema.parse(series);
  });

  it('drops the previous latest step when it is off the stride', () => {
    let series = emptySeries(4);
    for (const step of [1, 2, 3, 4, 5]) series = addPoint(series, { step, values: { r: step } });
    // stride 2: 1 (first), 2, 4, 5 (latest); 3 was dropped when 4 came.
    assert.deepEqual(
      series.points.map((p) => p.step),
      [1, 2, 4, 5],
    );
  });

  it('merges lines of the same step and replaces steps after a restart from an earlier one', () => {
    let series = emptySeries();
    series = addPoint(series, { step: 5, values: { r: 1 } });
    series = addPoint(series, { step: 5, values: { 'val-env/x/success': 0.5 } });
    series = addPoint(series, { step: 6, values: { r: 2 } });
    series = addPoint(series, { step: 7, values: { r: 3 } });
    series = addPoint(series, { step: 6, values: { r: 9 } });
    assert.deepEqual(series.points, [
      { step: 5, values: { r: 1, 'val-env/x/success': 0.5 } },
      { step: 6, values: { r: 9 } },
    ]);
  });

  it('refuses a bound too small to hold first, last and two between', () => {
    assert.throws(() => emptySeries(3), /maxPoints must be at least 4/);
  });
});

describe('metrics summary', () => {
  it('minimizes losses, times and lengths, maximizes the rest', () => {
    assert.equal(metricMode('actor/pg_loss'), 'min');
    assert.equal(metricMode('timing_s/step'), 'min');
    assert.equal(metricMode('response_length/mean'), 'min');
    assert.equal(metricMode('critic/score/mean'), 'max');
    assert.equal(metricMode('val-env/CoordSokoban/success'), 'max');
    assert.equal(metricMode('val-env/CoordSokoban/pass@1'), 'max');
  });

  it('keeps the last and the best value of each key with its step', () => {
    let s = updateSummary({}, 1, { 'critic/score/mean': 0.2, 'actor/loss': 3 });
    s = updateSummary(s, 2, { 'critic/score/mean': 0.9, 'actor/loss': 1 });
    s = updateSummary(s, 3, { 'critic/score/mean': 0.5, 'actor/loss': 2 });
    assert.deepEqual(s['critic/score/mean'], { last: 0.5, lastStep: 3, best: 0.9, bestStep: 2, mode: 'max' });
    assert.deepEqual(s['actor/loss'], { last: 2, lastStep: 3, best: 1, bestStep: 2, mode: 'min' });
  });
});
