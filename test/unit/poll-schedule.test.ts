import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollDelays } from '../../src/activities/common/poll-schedule.js';

describe('pollDelays', () => {
  it('polls every 250 ms for the first 10 s, then backs off to the configured interval', () => {
    const next = pollDelays(2000);
    const delays = Array.from({ length: 50 }, next);
    assert.deepEqual(delays.slice(0, 40), Array(40).fill(250));
    assert.deepEqual(delays.slice(40, 47), [375, 563, 845, 1268, 1902, 2000, 2000]);
  });

  it('never waits longer than the configured interval, even when it is shorter than 250 ms', () => {
    const next = pollDelays(100);
    assert.ok(Array.from({ length: 200 }, next).every((d) => d === 100));
  });
});
