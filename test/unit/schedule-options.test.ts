import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { parseScheduleRequest, scheduleOptions } from '../../src/cli/schedule.js';
import { testInput } from '../helpers/specs.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';

describe('schedule options', () => {
  it('defaults to overlap skip, a 1-minute catch-up window and pause on failure; embeds the validated sweep', () => {
    const request = parseScheduleRequest({ scheduleId: 'nightly', cron: '0 2 * * *' });
    const input = sweepInput(seedSweep([1, 2]));
    const options = scheduleOptions(request, { kind: 'sweep', input }, 'tq');
    assert.deepEqual(options.policies, {
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: '1m',
      pauseOnFailure: true,
    });
    assert.deepEqual(options.spec, { cronExpressions: ['0 2 * * *'] });
    assert.equal(options.action.type, 'startWorkflow');
    assert.equal(options.action.workflowType, 'sweep');
    assert.equal(options.action.workflowId, 'sweep-seed-sweep');
    assert.deepEqual(options.action.args, [input]);
  });

  it('takes an interval, another overlap policy and no pause for an experiment spec', () => {
    const request = parseScheduleRequest({
      scheduleId: 'hourly',
      every: '1h',
      overlap: 'buffer_one',
      catchupWindow: '5m',
      pauseOnFailure: false,
    });
    const options = scheduleOptions(request, { kind: 'experiment', input: testInput() }, 'tq');
    assert.deepEqual(options.spec, { intervals: [{ every: '1h' }] });
    assert.deepEqual(options.policies, {
      overlap: ScheduleOverlapPolicy.BUFFER_ONE,
      catchupWindow: '5m',
      pauseOnFailure: false,
    });
    assert.equal(options.action.workflowType, 'experiment');
  });

  it('refuses both or neither of cron and every, bad durations and unknown overlap policies, naming the field', () => {
    assert.throws(
      () => parseScheduleRequest({ scheduleId: 'x' }),
      /cron: give exactly one of --cron EXPR or --every DURATION/,
    );
    assert.throws(
      () => parseScheduleRequest({ scheduleId: 'x', cron: '@daily', every: '1h' }),
      /give exactly one/,
    );
    assert.throws(
      () => parseScheduleRequest({ scheduleId: 'x', every: 'soon' }),
      /every: a duration like 30s/,
    );
    assert.throws(
      () => parseScheduleRequest({ scheduleId: 'x', every: '1h', overlap: 'sometimes' }),
      /overlap/,
    );
    assert.throws(
      () => parseScheduleRequest({ scheduleId: 'x', cron: '0 2 *' }),
      /cron: a cron expression of 5 fields/,
    );
  });
});
