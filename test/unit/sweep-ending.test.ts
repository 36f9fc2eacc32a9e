import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type SweepEnding, type SweepTally, sweepEnding } from '../../src/domain/sweep/sweep-ending.js';

const tally = (t: Partial<SweepTally>): SweepTally => ({
  cancelled: false,
  total: 4,
  succeeded: 4,
  failed: 0,
  notStarted: 0,
  ...t,
});

describe('how a sweep ends (pure, table)', () => {
  const table: [string, Partial<SweepTally>, SweepEnding][] = [
    [
      'every child succeeded',
      {},
      {
        outcome: 'succeeded',
        stoppedByFailureBudget: false,
        event: 'succeeded',
        reason: '4 of 4 children succeeded',
      },
    ],
    [
      'failures below the budget still succeed',
      { succeeded: 3, failed: 1, failureBudget: 2 },
      {
        outcome: 'succeeded',
        stoppedByFailureBudget: false,
        event: 'succeeded',
        reason: '3 of 4 children succeeded',
      },
    ],
    [
      'failures without a budget still succeed',
      { succeeded: 0, failed: 4 },
      {
        outcome: 'succeeded',
        stoppedByFailureBudget: false,
        event: 'succeeded',
        reason: '0 of 4 children succeeded',
      },
    ],
    [
      'the budget reached fails the sweep and names it',
      { succeeded: 0, failed: 2, notStarted: 2, failureBudget: 2 },
      {
        outcome: 'failed',
        stoppedByFailureBudget: true,
        event: 'failureBudgetExhausted',
        reason: '2 children failed (failureBudget 2)',
        failure: '2 children failed (failureBudget 2); 2 of 4 were not started',
      },
    ],
    [
      // The defect of issue 27: the spec said 1, `sweep set` raised it to 3; the messages name 3.
      'a budget raised by sweep set: the messages name the budget in force',
      { succeeded: 1, failed: 3, notStarted: 0, failureBudget: 3 },
      {
        outcome: 'failed',
        stoppedByFailureBudget: true,
        event: 'failureBudgetExhausted',
        reason: '3 children failed (failureBudget 3)',
        failure: '3 children failed (failureBudget 3); 0 of 4 were not started',
      },
    ],
    [
      'cancelled: the sweep is cancelled, not failed',
      { cancelled: true, succeeded: 1, failed: 0, notStarted: 3 },
      {
        outcome: 'cancelled',
        stoppedByFailureBudget: false,
        event: 'cancelled',
        reason: '1 of 4 children succeeded',
      },
    ],
    [
      'cancelled after the budget ran out: told as the budget, not failed again',
      { cancelled: true, succeeded: 0, failed: 1, notStarted: 3, failureBudget: 1 },
      {
        outcome: 'cancelled',
        stoppedByFailureBudget: true,
        event: 'failureBudgetExhausted',
        reason: '1 children failed (failureBudget 1)',
      },
    ],
  ];
  for (const [why, t, expected] of table) {
    it(why, () => {
      assert.deepEqual(sweepEnding(tally(t)), expected);
    });
  }
});
