import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gpuUsageOfStages, sumGpuUsage } from '../../src/domain/usage/gpu-usage.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import type { StageRecord } from '../../src/domain/run/results.js';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const rec = (stage: StageRecord['stage'], attempt: number, from: number, to?: number): StageRecord => ({
  stage,
  attempt,
  startedAt: t(from),
  ...(to === undefined ? {} : { endedAt: t(to) }),
});

describe('GPU-seconds from stage records (pure)', () => {
  it('counts each cluster from its submit to its own teardown, and train time as busy', () => {
    // Attempt 0: submit at 10 s, join fails, teardown ends at 40 s (30 s of cluster).
    // Attempt 1: submit at 50 s, train 70..170 s, teardown ends at 200 s (150 s of cluster).
    const stages = [
      rec('preflight', 0, 0, 5),
      rec('submit', 0, 10, 12),
      rec('join', 0, 12, 35),
      rec('teardown', 0, 35, 40),
      rec('submit', 1, 50, 52),
      rec('join', 1, 52, 70),
      rec('train', 1, 70, 170),
      rec('validate', 1, 170, 180),
      rec('archive', 1, 180, 190),
      rec('teardown', 1, 190, 200),
    ];
    const u = gpuUsageOfStages(stages, 4, t(999), { pricePerGpuHour: 2.5, currency: 'USD' });
    assert.equal(u.allocatedSeconds, 4 * (30 + 150));
    assert.equal(u.busySeconds, 4 * 100);
    assert.equal(u.allocatedGpuHours, 0.2);
    assert.deepEqual(u.cost, { pricePerGpuHour: 2.5, currency: 'USD', allocated: 0.5 });
    assert.equal(u.openUntil, undefined, 'every cluster was torn down');
  });

  it('leaves out the wait of a suspended cluster in a Kueue queue (stage queued), finished or not', () => {
    // Submit at 0 s, queued 2..62 s (suspended: no Pods, no GPUs), join, train 70..170, teardown ends at 180.
    const stages = [
      rec('submit', 0, 0, 2),
      rec('queued', 0, 2, 62),
      rec('join', 0, 62, 70),
      rec('train', 0, 70, 170),
      rec('teardown', 0, 175, 180),
    ];
    assert.equal(gpuUsageOfStages(stages, 2, t(999)).allocatedSeconds, 2 * (180 - 60));
    // Still queued at 30 s: only the submit's 2 s so far.
    const waiting = gpuUsageOfStages([rec('submit', 0, 0, 2), rec('queued', 0, 2)], 2, t(30));
    assert.equal(waiting.allocatedSeconds, 2 * 2);
    assert.equal(waiting.openUntil, t(30));
  });

  it('counts a cluster not yet torn down (the manifest is written before teardown) until now', () => {
    const stages = [rec('submit', 0, 0, 2), rec('train', 0, 5, 65), rec('archive', 0, 70)];
    const u = gpuUsageOfStages(stages, 2, t(70));
    assert.equal(u.allocatedSeconds, 140);
    assert.equal(u.busySeconds, 120);
    assert.equal(u.openUntil, t(70));
    assert.equal(u.cost, undefined, 'no price, no cost');
  });

  it('is zero when no cluster was created (preflight failed)', () => {
    const u = gpuUsageOfStages([rec('preflight', 0, 0, 1)], 8, t(5));
    assert.deepEqual([u.allocatedSeconds, u.busySeconds, u.allocatedGpuHours], [0, 0, 0]);
  });

  it('sums runs, skipping one without a usage (an attempt that never reported)', () => {
    const fromStages = gpuUsageOfStages(
      [rec('submit', 0, 0, 1), rec('train', 0, 1, 31), rec('teardown', 0, 31, 36)],
      1,
      t(36),
    );
    assert.equal(fromStages.allocatedSeconds, 36);
    const total = sumGpuUsage([fromStages, undefined, { ...fromStages, gpus: 2 }], {
      pricePerGpuHour: 3600,
      currency: 'credits',
    });
    assert.equal(total.allocatedSeconds, 72);
    assert.equal(total.busySeconds, 60);
    assert.equal(total.gpus, 2);
    assert.equal(total.cost?.allocated, 72);
  });

  it('keeps manifests written before GPU-seconds existed parseable (the field is optional)', () => {
    assert.equal(ManifestSchema.shape.gpuUsage.safeParse(undefined).success, true);
  });
});
