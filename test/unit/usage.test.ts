import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type RunUsage,
  aggregateUsage,
  bucketStart,
  runUsageOfManifest,
  runUsageWhileRunning,
} from '../../src/domain/usage/usage.js';
import { run, usageWorld as world } from '../helpers/usage-fixtures.js';

const WINDOW = { since: '2026-11-30T00:00:00Z', until: '2026-12-10T00:00:00Z' };
const HOUR = 3600;
const ms = (s: number) => Math.round(s * 1000);

describe('usage aggregation (pure)', () => {
  it('totals equal the sum of the manifests exactly, by day and by week', () => {
    const w = world();
    const runs = w.all.map((m) => runUsageOfManifest(m));
    const allocated = w.all.reduce((s, m) => s + ms(m.gpuUsage!.allocatedSeconds), 0);
    const busy = w.all.reduce((s, m) => s + ms(m.gpuUsage!.busySeconds), 0);
    // The campaign's and sweep's own figures are their children's: counting experiments counts each once.
    const standalone = w.standalone.reduce((s, m) => s + ms(m.gpuUsage!.allocatedSeconds), 0);
    assert.equal(allocated, standalone + ms(w.campaign.allocatedSeconds) + ms(w.sweep.allocatedSeconds));
    for (const by of ['day', 'week'] as const) {
      const r = aggregateUsage(runs, { ...WINDOW, by });
      assert.equal(r.total.allocatedMs, allocated, by);
      assert.equal(r.total.busyMs, busy, by);
      assert.equal(r.total.runs, 8);
      assert.equal(
        r.rows.reduce((s, row) => s + row.allocatedMs, 0),
        allocated,
      );
      assert.ok(r.total.busyMs < r.total.allocatedMs, 'busy is part of allocated');
    }
  });

  it('one row per bucket, team and owner; a campaign attempt and sweep children each counted once', () => {
    const w = world();
    const r = aggregateUsage(
      w.all.map((m) => runUsageOfManifest(m)),
      { ...WINDOW, by: 'day' },
    );
    assert.deepEqual(
      r.rows.map((x) => [x.bucket, x.team, x.owner, x.runs]),
      [
        ['2026-12-01', 'nlp', 'cy', 2], // camp-1-a1 and exp-cy-1's first minutes
        ['2026-12-01', 'rl', 'dee', 3],
        ['2026-12-01', 'vision', 'ana', 1],
        ['2026-12-01', 'vision', 'bo', 1],
        ['2026-12-02', 'nlp', 'cy', 2], // exp-cy-1's rest and camp-1-a2
      ],
    );
    const dee = r.rows.find((x) => x.owner === 'dee')!;
    assert.equal(dee.allocatedMs, ms(w.sweep.allocatedSeconds), 'the sweep is its children');
    const cyTotal = r.rows.filter((x) => x.owner === 'cy').reduce((s, x) => s + x.allocatedMs, 0);
    assert.equal(cyTotal, ms(w.campaign.allocatedSeconds) + ms(w.standalone[2]!.gpuUsage!.allocatedSeconds));
  });

  it('splits a run that crosses midnight UTC by its cluster time on each side', () => {
    const m = run('exp-cy-1', 'cy', 'nlp', 14 * HOUR - 300, 1000);
    const u = runUsageOfManifest(m);
    const r = aggregateUsage([u], { ...WINDOW, by: 'day' });
    const [before, after] = r.rows;
    // The cluster starts at its submit (just before 00:00) and runs past it: split in proportion of time.
    const submit = Date.parse(u.allocatedSpans[0]!.from);
    const end = Date.parse(u.allocatedSpans[0]!.to);
    const midnight = Date.parse('2026-12-02T00:00:00Z');
    assert.equal(before!.allocatedMs, Math.round((u.allocatedMs * (midnight - submit)) / (end - submit)));
    assert.equal(before!.allocatedMs + after!.allocatedMs, u.allocatedMs);
    assert.equal(before!.bucket, '2026-12-01');
    assert.equal(after!.bucket, '2026-12-02');
  });

  it('counts a running workflow from its start to now with its GPUs, busy unknown', () => {
    const u = runUsageWhileRunning({
      workflowId: 'exp-live',
      owner: 'ana',
      team: 'vision',
      startedAt: '2026-12-03T22:00:00Z',
      gpus: 4,
      now: '2026-12-04T02:00:00Z',
    });
    const r = aggregateUsage([u], { ...WINDOW, by: 'day' });
    assert.deepEqual(
      r.rows.map((x) => [x.bucket, x.allocatedMs / 1000 / HOUR, x.busyMs, x.running]),
      [
        ['2026-12-03', 8, 0, 1],
        ['2026-12-04', 8, 0, 1],
      ],
    );
    assert.deepEqual([r.total.runs, r.total.running, r.total.allocatedMs], [1, 1, 16 * HOUR * 1000]);
  });

  it('leaves out time outside [since, until)', () => {
    const u = runUsageWhileRunning({
      workflowId: 'exp-live',
      owner: 'ana',
      team: 'vision',
      startedAt: '2026-12-03T22:00:00Z',
      gpus: 1,
      now: '2026-12-04T02:00:00Z',
    });
    const r = aggregateUsage([u], {
      since: '2026-12-03T23:00:00Z',
      until: '2026-12-04T01:00:00Z',
      by: 'day',
    });
    assert.deepEqual(
      r.rows.map((x) => x.allocatedMs / 1000),
      [HOUR, HOUR],
    );
    assert.equal(
      aggregateUsage([u], { since: '2026-12-05T00:00:00Z', until: '2026-12-06T00:00:00Z', by: 'day' }).rows
        .length,
      0,
    );
  });

  it('weeks start on Monday 00:00 UTC', () => {
    const monday = Date.parse('2026-11-30T00:00:00Z'); // a Monday
    assert.equal(bucketStart(Date.parse('2026-12-06T23:59:59.999Z'), 'week'), monday);
    assert.equal(bucketStart(Date.parse('2026-12-07T00:00:00Z'), 'week'), Date.parse('2026-12-07T00:00:00Z'));
    assert.equal(bucketStart(monday, 'week'), monday);
    assert.equal(bucketStart(Date.parse('2026-12-06T23:59:59Z'), 'day'), Date.parse('2026-12-06T00:00:00Z'));
  });

  it('prices each run by its own price, or every run by the one given; mixed currencies are refused', () => {
    const base = {
      owner: 'ana',
      team: 'vision',
      startedAt: '2026-12-03T00:00:00Z',
      gpus: 1,
      now: '2026-12-03T02:00:00Z',
    };
    const a: RunUsage = runUsageWhileRunning({
      ...base,
      workflowId: 'a',
      price: { pricePerGpuHour: 2, currency: 'USD' },
    });
    const b: RunUsage = runUsageWhileRunning({ ...base, workflowId: 'b' });
    const own = aggregateUsage([a, b], { ...WINDOW, by: 'day' });
    assert.deepEqual([own.currency, own.total.cost], ['USD', 4]);
    const given = aggregateUsage([a, b], {
      ...WINDOW,
      by: 'day',
      price: { pricePerGpuHour: 1.5, currency: 'EUR' },
    });
    assert.deepEqual([given.currency, given.total.cost], ['EUR', 6]);
    assert.equal(aggregateUsage([b], { ...WINDOW, by: 'day' }).total.cost, undefined, 'no price, no cost');
    const c = runUsageWhileRunning({
      ...base,
      workflowId: 'c',
      price: { pricePerGpuHour: 1, currency: 'EUR' },
    });
    assert.throws(
      () => aggregateUsage([a, c], { ...WINDOW, by: 'day' }),
      /USD and EUR: give --price-per-gpu-hour/,
    );
  });
});
