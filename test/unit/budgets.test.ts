import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  QUEUE_STALE_SECONDS,
  newLedger,
  report,
  reserve,
  setBudget,
  settle,
} from '../../src/domain/budget/budget-ledger.js';
import {
  type TeamBudget,
  estimateGpuHours,
  fits,
  parseBudgets,
  periodStart,
} from '../../src/domain/budget/budgets.js';

const T0 = '2026-12-09T10:00:00.000Z'; // a Wednesday
const queue: TeamBudget = { gpuHours: 10, period: 'week', policy: 'queue' };
const refuse: TeamBudget = { ...queue, policy: 'refuse' };

describe('budgets.yaml (schema)', () => {
  it('parses teams with gpuHours, period and policy', () => {
    const b = parseBudgets(
      { teams: { rl: queue, 'vision.x': { gpuHours: 0.5, period: 'day', policy: 'refuse' } } },
      'b.yaml',
    );
    assert.deepEqual(Object.keys(b.teams), ['rl', 'vision.x']);
  });

  it('names the field and the fix', () => {
    const bad = (value: unknown) => {
      try {
        parseBudgets(value, 'budgets.yaml');
      } catch (err) {
        return (err as Error).message;
      }
      assert.fail('expected a SpecError');
    };
    const zero = bad({ teams: { rl: { ...queue, gpuHours: 0 } } });
    assert.match(zero, /budgets\.yaml: invalid budgets file/);
    assert.match(zero, /teams\.rl\.gpuHours: must be above 0/);
    assert.match(
      bad({ teams: { rl: { ...queue, period: 'year' } } }),
      /teams\.rl\.period: use day, week or month/,
    );
    assert.match(
      bad({ teams: { rl: { ...queue, policy: 'wait' } } }),
      /teams\.rl\.policy: use queue .* or refuse/,
    );
    assert.match(
      bad({ teams: { rl: { period: 'day', policy: 'queue' } } }),
      /teams\.rl\.gpuHours: is required/,
    );
    assert.match(bad({ teams: { rl: { ...queue, gpuHour: 3 } } }), /teams\.rl\.gpuHour: unknown field/);
    assert.match(bad({ teams: { 'bad team': queue } }), /bad key/);
  });
});

describe('budget helpers (pure)', () => {
  it('periods start at 00:00 UTC: the day, the Monday, the 1st', () => {
    assert.equal(periodStart('day', T0), '2026-12-09T00:00:00.000Z');
    assert.equal(periodStart('week', T0), '2026-12-07T00:00:00.000Z');
    assert.equal(periodStart('week', '2026-12-13T23:59:59Z'), '2026-12-07T00:00:00.000Z'); // Sunday
    assert.equal(periodStart('week', '2026-12-07T00:00:00Z'), '2026-12-07T00:00:00.000Z'); // Monday
    assert.equal(periodStart('month', T0), '2026-12-01T00:00:00.000Z');
    assert.equal(periodStart('day', '2026-12-09T23:30:00-02:00'), '2026-12-10T00:00:00.000Z');
  });

  it('a reservation fits while spent + reserved + it stays within the budget', () => {
    assert.equal(fits(queue, 4, 3, 3), true);
    assert.equal(fits(queue, 4, 3, 3.01), false);
  });

  it('estimates nnodes x GPUs per node x runSeconds, or takes the stated estimate', () => {
    const spec = { trainer: { nnodes: 2, nGpusPerNode: 4 }, deadlines: { runSeconds: 1800 } };
    assert.equal(estimateGpuHours(spec), 4);
    assert.equal(estimateGpuHours({ ...spec, budget: { estimateGpuHours: 1.5 } }), 1.5);
  });
});

describe('budget ledger (pure)', () => {
  it('grants, then refuses with the budget, the spend and the reservation (policy refuse)', () => {
    const l = newLedger('rl', refuse, T0);
    assert.deepEqual(reserve(l, { key: 'a', gpuHours: 6 }, T0), { status: 'granted', gpuHours: 6 });
    settle(l, { key: 'a', gpuHours: 5 }, T0);
    reserve(l, { key: 'b', gpuHours: 3 }, T0);
    const r = reserve(l, { key: 'c', gpuHours: 4 }, T0);
    assert.equal(r.status, 'refused');
    assert.match(
      r.status === 'refused' ? r.message : '',
      /team rl is 10 GPU-hours per week .*spent 5, reserved by running runs 3; this run's reservation of 4 GPU-hours would exceed it/,
    );
    assert.deepEqual(reserve(l, { key: 'c', gpuHours: 4 }, T0), r, 'the same answer again');
  });

  it('queues in FIFO order and grants when settles free room', () => {
    const l = newLedger('rl', queue, T0);
    reserve(l, { key: 'a', gpuHours: 8 }, T0);
    assert.equal(reserve(l, { key: 'b', gpuHours: 5 }, T0).status, 'queued');
    const c = reserve(l, { key: 'c', gpuHours: 1 }, T0);
    assert.deepEqual(
      [c.status, c.status === 'queued' && c.position],
      ['queued', 2],
      'c would fit but b was first',
    );
    settle(l, { key: 'a', gpuHours: 4 }, T0);
    assert.deepEqual(reserve(l, { key: 'b', gpuHours: 5 }, T0), { status: 'granted', gpuHours: 5 });
    assert.deepEqual(reserve(l, { key: 'c', gpuHours: 1 }, T0), { status: 'granted', gpuHours: 1 });
    assert.deepEqual(report(l, T0).reserved, 6);
  });

  it('refuses, even under policy queue, what can never fit', () => {
    const l = newLedger('rl', queue, T0);
    const r = reserve(l, { key: 'a', gpuHours: 11 }, T0);
    assert.equal(r.status, 'refused');
    assert.match(r.status === 'refused' ? r.message : '', /can never fit/);
  });

  it('counts a repeated settle once and returns the same answer', () => {
    const l = newLedger('rl', queue, T0);
    reserve(l, { key: 'a', gpuHours: 3 }, T0);
    const first = settle(l, { key: 'a', gpuHours: 2 }, T0);
    assert.deepEqual(settle(l, { key: 'a', gpuHours: 2 }, T0), first);
    assert.deepEqual(reserve(l, { key: 'a', gpuHours: 3 }, T0), { status: 'granted', gpuHours: 2 });
    assert.equal(report(l, T0).spent, 2);
    assert.equal(report(l, T0).reserved, 0);
  });

  it('starts a new period with nothing spent; a reservation held across it stays', () => {
    const l = newLedger('rl', queue, T0);
    reserve(l, { key: 'a', gpuHours: 4 }, T0);
    settle(l, { key: 'a', gpuHours: 4 }, T0);
    reserve(l, { key: 'b', gpuHours: 5 }, T0);
    const monday = '2026-12-14T00:00:01Z';
    const r = report(l, monday);
    assert.deepEqual([r.periodStart, r.spent, r.reserved], ['2026-12-14T00:00:00.000Z', 0, 5]);
    assert.deepEqual(
      settle(l, { key: 'a', gpuHours: 4 }, monday).periodStart,
      '2026-12-07T00:00:00.000Z',
      'a settle retried just after the period ends is still known',
    );
    assert.equal(report(l, monday).spent, 0);
  });

  it('drops a queued run that stopped asking; a raised budget grants the queue', () => {
    const l = newLedger('rl', queue, T0);
    reserve(l, { key: 'a', gpuHours: 9 }, T0);
    reserve(l, { key: 'gone', gpuHours: 5 }, T0);
    const later = new Date(Date.parse(T0) + (QUEUE_STALE_SECONDS + 1) * 1000).toISOString();
    reserve(l, { key: 'b', gpuHours: 2 }, T0);
    reserve(l, { key: 'b', gpuHours: 2 }, later); // b keeps asking; gone does not
    assert.deepEqual(
      report(l, later).queue.map((q) => q.key),
      ['b'],
    );
    setBudget(l, { ...queue, gpuHours: 11 }, later);
    assert.deepEqual(report(l, later).queue, []);
    assert.equal(report(l, later).reserved, 11);
  });
});

describe('budgets report (table)', () => {
  it('shows each team with its budget, spend, reservations, what is left and the queue', async () => {
    const { budgetsTable } = await import('../../src/cli/budgets.js');
    const l = newLedger('rl', queue, T0);
    reserve(l, { key: 'a', gpuHours: 6 }, T0);
    settle(l, { key: 'a', gpuHours: 2.5 }, T0);
    reserve(l, { key: 'b', gpuHours: 6 }, T0);
    reserve(l, { key: 'c', gpuHours: 4 }, T0);
    const lines = budgetsTable([report(l, T0)])
      .trim()
      .split('\n');
    assert.match(
      lines[0] ?? '',
      /^TEAM\s+BUDGET\s+PERIOD\s+SINCE\s+SPENT\s+RESERVED\s+LEFT\s+POLICY\s+QUEUED$/,
    );
    assert.match(lines[1] ?? '', /^rl\s+10\.00\s+week\s+2026-12-07\s+2\.50\s+6\.00\s+1\.50\s+queue\s+1$/);
  });
});
