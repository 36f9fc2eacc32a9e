import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Scheduler,
  SchedulerSchema,
  ashaRungs,
  emptySchedulerState,
  onIntermediateResult,
  promotableChild,
  schedulerStop,
} from '../../src/domain/sweep/asha.js';
import { SweepSpecSchema } from '../../src/domain/sweep/sweep.js';
import { emptyTrainLogState, feedTrainLog } from '../../src/activities/train/train-log.js';
import { validationReporter } from '../../src/activities/train/validation-reports.js';
import { testSpec } from '../helpers/specs.js';

const asha = (extra: Partial<Record<string, unknown>> = {}): Scheduler =>
  SchedulerSchema.parse({
    type: 'asha',
    metric: 'val-env/CoordSokoban/success',
    gracePeriod: 2,
    reductionFactor: 2,
    maxSteps: 16,
    ...extra,
  });

describe('ASHA rung rule (pure, hand-computed rungs)', () => {
  it('puts rungs at gracePeriod x reductionFactor^k below maxSteps', () => {
    assert.deepEqual(ashaRungs({ gracePeriod: 2, reductionFactor: 2 }, 16), [2, 4, 8]);
    assert.deepEqual(ashaRungs({ gracePeriod: 1, reductionFactor: 3 }, 100), [1, 3, 9, 27, 81]);
    assert.deepEqual(ashaRungs({ gracePeriod: 5, reductionFactor: 3 }, 5), []);
  });

  it('keeps the top 1/reductionFactor of the values recorded at a rung so far, in arrival order', () => {
    const s = asha();
    const state = emptySchedulerState();
    const at = (index: number, step: number, value: number) =>
      onIntermediateResult(s, state, { index, step, value }, 16);
    // rung 2: [0.5] keep 1 → child 0 continues
    assert.deepEqual(at(0, 2, 0.5), { stop: false, rung: 2 });
    // rung 2: [0.5, 0.3] keep max(1, floor(2/2)) = 1; 0.5 is ahead → child 1 stops
    const stop1 = at(1, 2, 0.3);
    assert.equal(stop1.stop, true);
    assert.equal(stop1.rung, 2);
    assert.match(
      stop1.reason ?? '',
      /asha rung 2: val-env\/CoordSokoban\/success=0.3 is not in the top 1 of 2/,
    );
    // rung 2: [0.5, 0.3, 0.7] keep 1; nobody ahead → continues
    assert.equal(at(2, 2, 0.7).stop, false);
    // rung 2: 4 values, keep floor(4/2) = 2; only 0.7 ahead of 0.6 → continues
    assert.equal(at(3, 2, 0.6).stop, false);
    // rung 4: [0.55] → continues; then [0.55, 0.5] keep 1 → child 3 stops at rung 4
    assert.equal(at(0, 4, 0.55).stop, false);
    assert.deepEqual([at(3, 4, 0.5).stop, state.rungs['4']?.map((e) => e.index)], [true, [0, 3]]);
    // step 3 is no rung and rung 2 is judged already: no decision
    assert.deepEqual(at(2, 3, 0.0), { stop: false });
    // a report past two rungs is judged at the highest one it has not been judged at (4)
    assert.deepEqual(at(4, 6, 0.9), { stop: false, rung: 4 });
    assert.equal(state.rungs['4']?.length, 3);
    // a repeated report (a retried activity) changes nothing
    assert.deepEqual(at(0, 4, 0.0), { stop: false });
    assert.equal(state.rungs['4']?.length, 3);
    // nothing at or past maxSteps is a rung
    assert.deepEqual(at(0, 16, 0.0), { stop: false, rung: 8 });
  });

  it('promotion: a stopped child that later arrivals leave in the top 1/reductionFactor, once per rung', () => {
    const s = asha({ promote: true });
    const state = emptySchedulerState();
    const at = (index: number, value: number) =>
      onIntermediateResult(s, state, { index, step: 2, value }, 16);
    at(0, 0.9); // keep 1 of 1 → continues
    assert.equal(at(1, 0.5).stop, true); // keep 1 of 2, 0.9 ahead
    assert.equal(at(2, 0.3).stop, true); // keep 1 of 3, 2 ahead
    const stopped = [
      { index: 1, rung: 2 },
      { index: 2, rung: 2 },
    ];
    assert.equal(promotableChild(s, state, stopped), undefined, 'keep 1 of 3: child 1 has 1 ahead');
    assert.equal(at(3, 0.2).stop, true); // keep 2 of 4, 3 ahead
    stopped.push({ index: 3, rung: 2 });
    // keep floor(4/2) = 2: child 1 (1 ahead) now qualifies; child 2 (2 ahead) does not
    assert.deepEqual(promotableChild(s, state, stopped), { index: 1, rung: 2 });
    state.promoted = [{ index: 1, rung: 2 }];
    assert.equal(promotableChild(s, state, stopped), undefined, 'each child once per rung');
    // off by default, and never for median stopping
    assert.equal(promotableChild(asha(), state, stopped), undefined);
    const plain = asha();
    assert.equal(plain.type === 'asha' && plain.promote, false);
  });

  it('mode min keeps the smallest values; ties are not ahead', () => {
    const s = asha({ mode: 'min', reductionFactor: 3, gracePeriod: 1 });
    const state = emptySchedulerState();
    const at = (index: number, value: number) =>
      onIntermediateResult(s, state, { index, step: 1, value }, 16);
    assert.equal(at(0, 0.2).stop, false);
    assert.equal(at(1, 0.2).stop, false, 'a tie is not better');
    assert.equal(at(2, 0.1).stop, false);
    assert.equal(at(3, 0.3).stop, true, 'keep floor(4/3) = 1; three are ahead');
    assert.equal(at(4, 0.05).stop, false);
    assert.equal(at(5, 0.15).stop, true, 'keep floor(6/3) = 2; 0.1 and 0.05 are ahead');
  });
});

describe('median stopping rule (pure)', () => {
  it('stops a child whose best so far is worse than the median of the others, after the grace period', () => {
    const s = SchedulerSchema.parse({
      type: 'median',
      metric: 'val-env/CoordSokoban/success',
      gracePeriod: 4,
      minChildren: 2,
    });
    const state = emptySchedulerState();
    const at = (index: number, step: number, value: number) =>
      onIntermediateResult(s, state, { index, step, value }, 20);
    assert.equal(at(0, 2, 0.1).stop, false, 'before the grace period');
    assert.equal(at(1, 4, 0.5).stop, false, 'one other child only (minChildren 2)');
    const d = at(2, 4, 0.2); // others: 0.1, 0.5 → median 0.3 > 0.2
    assert.equal(d.stop, true);
    assert.match(d.reason ?? '', /median 0.3 of 2 other children/);
    // others: 0.5, 0.2 → median 0.35; child 0's best up to step 4 is 0.4 → continues
    assert.equal(at(0, 4, 0.4).stop, false);
  });
});

describe('scheduler spec', () => {
  it('refuses bad settings with the field and the fix', () => {
    const bad = SchedulerSchema.safeParse({
      type: 'asha',
      metric: 'success',
      gracePeriod: 0,
      reductionFactor: 1,
    });
    assert.equal(bad.success, false);
    const text = bad.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n') ?? '';
    assert.match(text, /metric: .*val-env\/CoordSokoban\/success/);
    assert.match(text, /gracePeriod/);
    assert.match(text, /reductionFactor must be at least 2/);
    assert.equal(
      SchedulerSchema.safeParse({ type: 'hyperband', metric: 'x', gracePeriod: 1 }).success,
      false,
    );
  });
});

describe('sweep spec with a scheduler (refused before anything starts)', () => {
  const sweepWith = (trainer: Record<string, unknown>, scheduler: Record<string, unknown>, grid = {}) =>
    SweepSpecSchema.safeParse({
      name: 'asha-sweep',
      base: { ...testSpec(), trainer: { ...testSpec().trainer, ...trainer } },
      parameters: { grid: { 'trainer.seedTrain': [1, 2], ...grid } },
      scheduler: { type: 'asha', metric: 'val-env/CoordSokoban/success', ...scheduler },
    });
  const messages = (r: ReturnType<typeof sweepWith>) =>
    r.success ? '' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n');

  it('accepts rungs on validation steps', () => {
    const ok = sweepWith({ testFreq: 2 }, { gracePeriod: 4, reductionFactor: 2 });
    assert.equal(ok.success, true, messages(ok));
  });
  it('needs in-loop validations, rungs on them, and steps every child shares', () => {
    assert.match(
      messages(sweepWith({ testFreq: 0 }, { gracePeriod: 4 })),
      /base.trainer.testFreq: .*set trainer.testFreq > 0/,
    );
    assert.match(
      messages(sweepWith({ testFreq: 3 }, { gracePeriod: 4 })),
      /scheduler.gracePeriod: gracePeriod 4 is not a multiple of trainer.testFreq 3/,
    );
    assert.match(
      messages(sweepWith({ testFreq: 2 }, { gracePeriod: 4, maxSteps: 40 })),
      /scheduler.maxSteps: .*above/,
    );
    assert.match(
      messages(sweepWith({ testFreq: 2 }, { gracePeriod: 4 }, { 'trainer.testFreq': [2, 4] })),
      /'trainer.testFreq' cannot be swept with a scheduler/,
    );
  });
});

/** Step lines as the train activity hands them over: parsed once, by feedTrainLog. */
const steps = (lines: string) => feedTrainLog(emptyTrainLogState(), lines);

describe('in-loop validations read from the job log (one report per validation)', () => {
  it('reports each val-env step line once, from the lines appended since the last call', () => {
    const r = validationReporter(0);
    const lines1 =
      'step:1 - actor/loss:0.5\n(TaskRunner pid=7) step:2 - val-env/CoordSokoban/success:np.float64(0.25) - actor/loss:0.4\n';
    assert.deepEqual(r.newValidations(steps(lines1)), [
      { step: 2, metrics: { 'val-env/CoordSokoban/success': 0.25 } },
    ]);
    const lines2 =
      'step:3 - val-env/CoordSokoban/success:0.5 - val-env/CoordSokoban/pass@8:0.75\nstep:4 - actor/loss:0.3\n';
    assert.deepEqual(r.newValidations(steps(lines2)), [
      { step: 3, metrics: { 'val-env/CoordSokoban/success': 0.5, 'val-env/CoordSokoban/pass@8': 0.75 } },
    ]);
    assert.deepEqual(
      r.newValidations(steps(lines1 + lines2)),
      [],
      'a step already reported is not reported again',
    );
  });
  it('skips the resumed checkpoint step (its validation line is not a new one)', () => {
    const r = validationReporter(10);
    assert.deepEqual(
      r
        .newValidations(steps('step:10 - val-env/A/success:0.1\nstep:12 - val-env/A/success:0.2\n'))
        .map((v) => v.step),
      [12],
    );
  });
  it("with ASHA's rungs, reports only the first validation at or past each rung", () => {
    // Validations every 2 steps, rungs 4 and 16; step 16 is missed (the run was stopped before it),
    // so nothing is reported past 4. A rung between validations (5) takes the next one (6).
    const r = validationReporter(0, [4, 5, 16]);
    const log = (from: number, to: number) =>
      Array.from(
        { length: (to - from) / 2 + 1 },
        (_, i) => `step:${from + 2 * i} - val-env/A/success:0.5\n`,
      ).join('');
    assert.deepEqual(
      r.newValidations(steps(log(2, 8))).map((v) => v.step),
      [4, 6],
    );
    assert.deepEqual(
      r.newValidations(steps(log(10, 14))).map((v) => v.step),
      [],
    );
    assert.deepEqual(
      r.newValidations(steps(log(16, 20))).map((v) => v.step),
      [16],
    );
    const resumed = validationReporter(4, [4, 16]);
    assert.deepEqual(
      resumed.newValidations(steps(log(4, 16))).map((v) => v.step),
      [16],
      'a run resumed at a rung reports only the rungs after it',
    );
  });
});

describe('the sweep scheduler on a child validation (schedulerStop, pure, table)', () => {
  const METRIC = 'val-env/CoordSokoban/success';
  // Rung 2 already holds child 0 at 0.9: with reductionFactor 2 a worse child stops there.
  const seeded = () => {
    const state = emptySchedulerState();
    onIntermediateResult(asha(), state, { index: 0, step: 2, value: 0.9 }, 16);
    return state;
  };
  const report = (index: number | undefined, value?: number, step = 2) => ({
    index,
    step,
    metrics: (value === undefined ? { other: 1 } : { [METRIC]: value }) as Record<string, number>,
  });
  const stop = (index: number) => ({
    index,
    stop: {
      rung: 2,
      step: 2,
      reason: `asha rung 2: ${METRIC}=0.5 is not in the top 1 of 2 (reductionFactor 2, 1 better)`,
    },
  });
  const table: [
    string,
    Scheduler | undefined,
    ReturnType<typeof report>,
    Record<number, boolean>,
    unknown,
  ][] = [
    ['a worse child at the rung is told to stop', asha(), report(1, 0.5), {}, stop(1)],
    ['a better child runs on', asha(), report(1, 0.95), {}, undefined],
    ['a child told already is not told twice', asha(), report(1, 0.5), { 1: true }, undefined],
    ['a report without the metric is ignored', asha(), report(1), {}, undefined],
    ['a workflow that is not a running child is ignored', asha(), report(undefined, 0.5), {}, undefined],
    ['no scheduler: nothing to decide', undefined, report(1, 0.5), {}, undefined],
  ];
  for (const [why, scheduler, r, sent, expected] of table) {
    it(why, () => {
      assert.deepEqual(schedulerStop(scheduler, seeded(), r, 16, sent), expected);
    });
  }

  it('records the value even when it sends nothing (the rung rule sees every report once)', () => {
    const state = seeded();
    schedulerStop(asha(), state, report(1, 0.5), 16, { 1: true });
    assert.deepEqual(state.reports['1'], [[2, 0.5]]);
  });
});
