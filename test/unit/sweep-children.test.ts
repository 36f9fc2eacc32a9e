import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SchedulerSchema, emptySchedulerState } from '../../src/domain/sweep/asha.js';
import type { ExperimentResult } from '../../src/domain/run/experiment-input.js';
import type { ChildOutcome } from '../../src/domain/sweep/sweep.js';
import {
  childExperimentInput,
  childSummary,
  endedChild,
  failedChild,
  lastIntermediateOf,
  promotedWorkflowId,
  refusedChild,
  withPromotion,
} from '../../src/domain/sweep/sweep-children.js';
import { testInput, testSpec } from '../helpers/specs.js';

const result = (r: Partial<ExperimentResult> = {}): ExperimentResult => ({
  outcome: 'succeeded',
  training: { outcome: 'succeeded', finalStep: 20 },
  validation: { outcome: 'succeeded', successRate: 0.75 },
  archive: { outcome: 'succeeded', manifestPath: '/a/manifest.json' },
  teardown: { outcome: 'succeeded' },
  stages: [],
  checkpointDir: '/c',
  submits: 1,
  gpuUsage: { gpus: 2, allocatedSeconds: 100, busySeconds: 60, allocatedGpuHours: 0.03 },
  ...r,
});

describe("a sweep child's row (pure, table)", () => {
  const rows: [string, ChildOutcome, ChildOutcome][] = [
    [
      'a child that succeeded: its value, manifest and GPU-seconds',
      endedChild(0, 's-0', result(), {}),
      {
        index: 0,
        workflowId: 's-0',
        outcome: 'succeeded',
        successRate: 0.75,
        manifestPath: '/a/manifest.json',
        error: undefined,
        gpuSeconds: 100,
        busyGpuSeconds: 60,
      },
    ],
    [
      'a child paused by hand counts as cancelled',
      endedChild(1, 's-1', result({ outcome: 'paused', validation: { outcome: 'skipped' } }), {}),
      {
        index: 1,
        workflowId: 's-1',
        outcome: 'cancelled',
        successRate: undefined,
        manifestPath: '/a/manifest.json',
        error: 'paused by hand before validation',
        gpuSeconds: 100,
        busyGpuSeconds: 60,
      },
    ],
    [
      'a child the scheduler stopped: the rung, the reason and its last report',
      endedChild(
        2,
        's-2',
        result({
          outcome: 'pruned',
          validation: { outcome: 'skipped' },
          pruned: { rung: 2, step: 3, reason: 'behind' },
        }),
        { lastIntermediate: [2, 0.4] },
      ),
      {
        index: 2,
        workflowId: 's-2',
        outcome: 'pruned',
        successRate: undefined,
        manifestPath: '/a/manifest.json',
        error: undefined,
        gpuSeconds: 100,
        busyGpuSeconds: 60,
        lastIntermediate: [2, 0.4],
        pruned: { rung: 2, reason: 'behind' },
      },
    ],
    [
      'a failed child keeps the first line of its error and what its result carried',
      failedChild(3, 's-3', { cancelled: false, message: 'train failed\nstack...', result: result() }, {}),
      {
        index: 3,
        workflowId: 's-3',
        outcome: 'failed',
        successRate: 0.75,
        manifestPath: '/a/manifest.json',
        error: 'train failed',
        gpuSeconds: 100,
        busyGpuSeconds: 60,
      },
    ],
    [
      'a child cancelled before any result',
      failedChild(4, 's-4', { cancelled: true, message: 'cancelled' }, {}),
      {
        index: 4,
        workflowId: 's-4',
        outcome: 'cancelled',
        successRate: undefined,
        manifestPath: undefined,
        error: 'cancelled',
      },
    ],
    [
      'a configuration the base spec refuses names each field',
      refusedChild(5, 's-5', [
        { field: 'trainer.seedTrain', message: 'expected a number' },
        { field: 'x', message: 'y' },
      ]),
      { index: 5, workflowId: 's-5', outcome: 'failed', error: 'trainer.seedTrain: expected a number; x: y' },
    ],
  ];
  for (const [why, actual, expected] of rows) {
    it(why, () => {
      assert.deepEqual(actual, expected);
    });
  }

  it('an error is cut to one line of at most 300 characters', () => {
    const row = failedChild(0, 's', { cancelled: false, message: 'x'.repeat(400) }, {});
    assert.equal(row.error?.length, 300);
  });

  const promotions: [string, ChildOutcome, ChildOutcome, ChildOutcome][] = [
    [
      'GPU-seconds of both runs, the promotion listed',
      { index: 1, workflowId: 's-1', outcome: 'pruned', gpuSeconds: 10, busyGpuSeconds: 4 },
      { index: 1, workflowId: 's-1-p2', outcome: 'succeeded', gpuSeconds: 30, busyGpuSeconds: 20 },
      {
        index: 1,
        workflowId: 's-1-p2',
        outcome: 'succeeded',
        gpuSeconds: 40,
        busyGpuSeconds: 24,
        promotions: [{ rung: 2, fromStep: 2, workflowId: 's-1-p2' }],
      },
    ],
    [
      'one side without GPU-seconds keeps the other; earlier promotions stay first',
      {
        index: 1,
        workflowId: 's-1-p2',
        outcome: 'pruned',
        gpuSeconds: 10,
        promotions: [{ rung: 2, fromStep: 2, workflowId: 's-1-p2' }],
      },
      { index: 1, workflowId: 's-1-p4', outcome: 'failed' },
      {
        index: 1,
        workflowId: 's-1-p4',
        outcome: 'failed',
        gpuSeconds: 10,
        busyGpuSeconds: undefined,
        promotions: [
          { rung: 2, fromStep: 2, workflowId: 's-1-p2' },
          { rung: 2, fromStep: 2, workflowId: 's-1-p4' },
        ],
      },
    ],
  ];
  for (const [why, prior, row, expected] of promotions) {
    it(`a promoted child's row: ${why}`, () => {
      assert.deepEqual(withPromotion(row, { prior, rung: 2, fromStep: 2 }), expected);
    });
  }

  it('the last intermediate report of a child, when the scheduler has one', () => {
    const state = {
      ...emptySchedulerState(),
      reports: { '1': [[2, 0.3] as [number, number], [4, 0.5] as [number, number]] },
    };
    assert.deepEqual(lastIntermediateOf(state, 1), { lastIntermediate: [4, 0.5] });
    assert.deepEqual(lastIntermediateOf(state, 0), {});
  });
});

describe("a sweep child's start (pure, table)", () => {
  const spec = testSpec();
  const { provenance } = testInput();
  const asha = SchedulerSchema.parse({
    type: 'asha',
    metric: 'val-env/CoordSokoban/success',
    gracePeriod: 2,
    reductionFactor: 2,
  });
  const median = SchedulerSchema.parse({
    type: 'median',
    metric: 'val-env/CoordSokoban/success',
    gracePeriod: 2,
  });
  const short = { ...spec, trainer: { ...spec.trainer, totalTrainingSteps: 5 } };
  const resume = {
    checkpointDir: '/c/s-1',
    ledgerPath: '/a/s-1/checkpoints.json',
    resumeFrom: '/c/s-1/global_step_2',
  };
  const inputs: [string, Parameters<typeof childExperimentInput>[0], Record<string, unknown>][] = [
    [
      'no scheduler: the spec and provenance only',
      { spec, provenance, scheduler: undefined, baseTotalSteps: 16 },
      {},
    ],
    [
      'asha: report validations at the rungs',
      { spec, provenance, scheduler: asha, baseTotalSteps: 16 },
      { reportValidations: true, reportSteps: [2, 4, 8] },
    ],
    [
      "asha: only the rungs a shorter child reaches (the sweep's rungs, from the base spec)",
      { spec: short, provenance, scheduler: asha, baseTotalSteps: 16 },
      { reportValidations: true, reportSteps: [2, 4] },
    ],
    [
      'median: every validation',
      { spec, provenance, scheduler: median, baseTotalSteps: 16 },
      { reportValidations: true },
    ],
    [
      'a promotion resumes the stopped child in its folders',
      { spec, provenance, scheduler: asha, baseTotalSteps: 16, resume },
      { reportValidations: true, reportSteps: [2, 4, 8], ...resume },
    ],
  ];
  for (const [why, a, extra] of inputs) {
    it(why, () => {
      assert.deepEqual(childExperimentInput(a), { spec: a.spec, provenance, ...extra });
    });
  }

  const summaries: [string, string][] = [
    [
      childSummary('s', 0, 3, { 'trainer.seedTrain': 1, 'algorithm.lr': 'x' }),
      's child 1/3: trainer.seedTrain=1, algorithm.lr="x"',
    ],
    [childSummary('s', 2, 3, {}), 's child 3/3: (base spec)'],
    [
      childSummary('s', 1, 3, { 'trainer.seedTrain': 5 }, { rung: 2, fromStep: 2 }),
      's child 2/3: trainer.seedTrain=5 (promoted at rung 2, from step 2)',
    ],
  ];
  for (const [actual, expected] of summaries) {
    it(`summary: ${expected}`, () => {
      assert.equal(actual, expected);
    });
  }

  it("a promoted run's id: the first run's and the rung", () => {
    assert.equal(promotedWorkflowId('sw-1-abc', 4), 'sw-1-abc-p4');
  });
});
