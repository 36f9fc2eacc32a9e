import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SchedulerSchema, emptySchedulerState } from '../../src/domain/sweep/asha.js';
import type { ChildOutcome } from '../../src/domain/sweep/sweep.js';
import {
  type SweepMove,
  type SweepSlots,
  configurationsLeft,
  nextWhilePromoting,
  nextWhileStarting,
  promotionCandidate,
  stoppedChildren,
} from '../../src/domain/sweep/sweep-next.js';

/** 10 configurations, 3 started, 1 of 2 slots used, no failure, no budget. */
const base: SweepSlots = { next: 3, total: 10, running: 1, concurrency: 2, failed: 0 };
const promotable = { index: 1, rung: 2 };

describe('which child a sweep starts next (pure, table)', () => {
  const starting: [string, Partial<SweepSlots> & { historyFull?: boolean }, SweepMove][] = [
    ['a free slot starts the next configuration', {}, { do: 'start', index: 3 }],
    ['every slot taken: wait', { running: 2 }, { do: 'wait' }],
    ['a lowered concurrency below the running ones: wait', { running: 2, concurrency: 1 }, { do: 'wait' }],
    ['the budget ran out while waiting: stop', { failed: 2, failureBudget: 2 }, { do: 'stop' }],
    ['failures below the budget: start', { failed: 1, failureBudget: 2 }, { do: 'start', index: 3 }],
    ['no budget: failures never stop it', { failed: 9 }, { do: 'start', index: 3 }],
    ['a full history hands over first', { historyFull: true }, { do: 'continueAsNew' }],
    [
      'a full history still stops for a spent budget',
      { historyFull: true, failed: 1, failureBudget: 1 },
      { do: 'stop' },
    ],
    ['a promotion goes before a new configuration', { promotable }, { do: 'promote', child: promotable }],
    ['continue-as-new goes before a promotion', { promotable, historyFull: true }, { do: 'continueAsNew' }],
  ];
  for (const [why, change, expected] of starting) {
    it(`while starting: ${why}`, () => {
      assert.deepEqual(nextWhileStarting({ ...base, historyFull: false, ...change }), expected);
    });
  }

  const promoting: [string, Partial<SweepSlots>, SweepMove][] = [
    ['a free slot and a promotable child: promote', { promotable }, { do: 'promote', child: promotable }],
    ['nothing to promote, children running: wait', {}, { do: 'wait' }],
    ['nothing to promote, none running: stop', { running: 0 }, { do: 'stop' }],
    [
      'none running and one to promote: promote',
      { running: 0, promotable },
      { do: 'promote', child: promotable },
    ],
    ['every slot taken: wait, even with one to promote', { running: 2, promotable }, { do: 'wait' }],
  ];
  for (const [why, change, expected] of promoting) {
    it(`after the last start: ${why}`, () => {
      assert.deepEqual(nextWhilePromoting({ ...base, next: 10, ...change }), expected);
    });
  }

  const left: [string, Partial<SweepSlots>, boolean][] = [
    ['configurations left, no budget', {}, true],
    ['every configuration started', { next: 10 }, false],
    ['the budget is spent', { failed: 3, failureBudget: 3 }, false],
    ['failures below the budget', { failed: 2, failureBudget: 3 }, true],
  ];
  for (const [why, change, expected] of left) {
    it(`configurations left to start: ${why}`, () => {
      assert.equal(configurationsLeft({ ...base, ...change }), expected);
    });
  }
});

describe('ASHA promotion candidates from the sweep rows (pure)', () => {
  const row = (index: number, outcome: ChildOutcome['outcome'], rung?: number): ChildOutcome => ({
    index,
    workflowId: `s-${index}`,
    outcome,
    ...(rung === undefined ? {} : { pruned: { rung, reason: 'r' } }),
  });
  const rows = [row(0, 'succeeded'), row(1, 'pruned', 2), row(2, 'failed'), row(3, 'pruned', 4)];
  // Rung 2 holds four values: keep 2; child 1 (0.5) has one ahead of it (0.9).
  const state = {
    ...emptySchedulerState(),
    rungs: {
      '2': [
        { index: 0, value: 0.9 },
        { index: 1, value: 0.5 },
        { index: 2, value: 0.3 },
        { index: 3, value: 0.2 },
      ],
    },
  };
  const asha = (promote: boolean) =>
    SchedulerSchema.parse({
      type: 'asha',
      metric: 'val-env/CoordSokoban/success',
      gracePeriod: 2,
      reductionFactor: 2,
      promote,
    });

  it('lists the stopped children with the rung each was stopped at', () => {
    assert.deepEqual(stoppedChildren(rows), [
      { index: 1, rung: 2 },
      { index: 3, rung: 4 },
    ]);
  });

  const table: [string, Parameters<typeof promotionCandidate>[0], typeof state, unknown][] = [
    ['asha with promote: the stopped child now in the top half', asha(true), state, { index: 1, rung: 2 }],
    ['asha without promote: none', asha(false), state, undefined],
    ['no scheduler: none', undefined, state, undefined],
    [
      'already promoted at that rung: none',
      asha(true),
      { ...state, promoted: [{ index: 1, rung: 2 }] },
      undefined,
    ],
  ];
  for (const [why, scheduler, s, expected] of table) {
    it(why, () => {
      assert.deepEqual(promotionCandidate(scheduler, s, rows), expected);
    });
  }
});
