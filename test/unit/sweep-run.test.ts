import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChildOutcome, SweepCarry } from '../../src/domain/sweep/sweep.js';
import { sweepEnding } from '../../src/domain/sweep/sweep-ending.js';
import {
  budgetExhausted,
  buildSweepManifest,
  newSweepRun,
  slotsOf,
  sweepCarry,
  sweepResult,
  sweepStatusOf,
} from '../../src/workflows/sweep-run.js';
import { SweepInputSchema } from '../../src/domain/sweep/sweep.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';

const ids = { workflowId: 'sw-1', runId: 'run-1', namespace: 'default', taskQueue: 'q' };
const row = (index: number, outcome: ChildOutcome['outcome'], successRate?: number): ChildOutcome => ({
  index,
  workflowId: `sw-1-${index}`,
  outcome,
  successRate,
  gpuSeconds: 10,
  busyGpuSeconds: 5,
});
const parsed = (carry?: SweepCarry) =>
  SweepInputSchema.parse(
    sweepInput(seedSweep([1, 2, 3, 4], { concurrency: 2, failureBudget: 2 }), carry ? { carry } : {}),
  );

describe('sweep run record (pure, no server)', () => {
  it('starts from the spec: every configuration, its limits, nothing run', () => {
    const run = newSweepRun(parsed(), ids);
    assert.equal(run.total, 4);
    assert.deepEqual(run.limits, { concurrency: 2, failureBudget: 2 });
    assert.deepEqual([run.next, run.runs, run.running, run.results.length], [0, 1, 0, 0]);
    assert.deepEqual(slotsOf(run), {
      next: 0,
      total: 4,
      running: 0,
      concurrency: 2,
      failed: 0,
      failureBudget: 2,
      promotable: undefined,
    });
  });

  it('resumes from what continue-as-new carried, the limits `sweep set` left included', () => {
    const carry = {
      nextIndex: 3,
      results: [row(0, 'succeeded', 0.5), row(1, 'failed'), row(2, 'succeeded', 0.9)],
      runs: 2,
      maxRunning: 2,
      limitChanges: [{ at: 't', concurrency: 1, failureBudget: 3 }],
    };
    const run = newSweepRun(parsed(carry), ids);
    assert.deepEqual(run.limits, { concurrency: 1, failureBudget: 3 });
    assert.equal(budgetExhausted(run), false);
    assert.deepEqual(sweepStatusOf(run), {
      total: 4,
      started: 3,
      running: 0,
      succeeded: 2,
      failed: 1,
      cancelled: 0,
      stoppedByFailureBudget: false,
      runs: 2,
      best: { index: 2, workflowId: 'sw-1-2', value: 0.9 },
      concurrency: 1,
      failureBudget: 3,
    });
    // Handed on again: one more run, the same results and changes.
    assert.deepEqual(sweepCarry(run), { ...carry, runs: 3 });
    assert.notEqual(run.results, carry.results, 'the record owns its copy of the results');
  });

  it('the status and the ending read the budget in force, not the spec’s', () => {
    const run = newSweepRun(parsed(), ids);
    run.results.push(row(0, 'failed'), row(1, 'failed'));
    assert.equal(sweepStatusOf(run).stoppedByFailureBudget, true);
    run.limits = { concurrency: 2, failureBudget: 3 };
    assert.equal(sweepStatusOf(run).stoppedByFailureBudget, false);
    assert.equal(budgetExhausted(run), false);
  });

  it('writes the manifest and the result from the record: ranked children, counts, GPU-seconds', () => {
    const run = newSweepRun(parsed(), ids);
    run.results.push(row(1, 'succeeded', 0.25), row(0, 'succeeded', 0.75), row(2, 'failed'));
    run.next = 3;
    run.maxRunning = 2;
    run.limitChanges.push({ at: 't', concurrency: 2, failureBudget: 2 });
    const ending = sweepEnding({
      cancelled: false,
      total: 4,
      succeeded: 2,
      failed: 1,
      notStarted: 1,
      failureBudget: 2,
    });
    const manifest = buildSweepManifest(run, ending, '2026-01-01T00:00:00.000Z');
    assert.deepEqual(manifest.temporal, ids);
    assert.deepEqual(manifest.counts, { total: 4, succeeded: 2, failed: 1, cancelled: 0, notStarted: 1 });
    assert.equal(manifest.outcome, 'succeeded');
    assert.deepEqual(
      manifest.children.map((c) => [c.index, c.rank]),
      [
        [0, 1],
        [1, 2],
        [2, undefined],
      ],
    );
    assert.deepEqual(manifest.children[0]?.params, { 'trainer.seedTrain': 1 });
    // 2 GPUs per child cluster; the rows keep only the seconds.
    assert.equal(manifest.gpuUsage?.allocatedSeconds, 30);
    assert.equal(manifest.gpuUsage?.gpus, 2);
    assert.deepEqual(manifest.limitChanges, run.limitChanges);
    const result = sweepResult(run, ending, { manifestPath: '/m', csvPath: '/c' });
    assert.equal(result.sweepId, 'sw-1');
    assert.deepEqual(
      [result.succeeded, result.failed, result.notStarted, result.maxRunning, result.runs],
      [2, 1, 1, 2, 1],
    );
    assert.deepEqual(result.ranked, manifest.children);
    assert.equal(result.tracking, undefined);
  });
});
