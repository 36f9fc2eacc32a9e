import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CHECKPOINT_REPORT_INTERVAL_MS,
  ProgressCadence,
} from '../../src/activities/train/progress-cadence.js';
import { withTrainHeartbeat } from '../../src/cli/live-status.js';

const MIN = 60_000;

describe('train progress signals: a bounded count, whatever the step count', () => {
  it('signals the first step once, then a checkpoint at most every interval; steps never', async () => {
    let asked = 0;
    const cadence = new ProgressCadence(false, async () => {
      asked += 1;
      return false;
    });
    const due = (trained: boolean, newCheckpoint: boolean, now: number) =>
      cadence.due({ trained, newCheckpoint, now });
    assert.equal(await due(false, false, 0), false, 'no step yet');
    assert.equal(await due(true, false, 1), true, 'the first training step');
    assert.equal(await due(true, false, 2), false, 'later steps: heartbeat only');
    assert.equal(await due(true, true, 3), true, 'the first checkpoint');
    let signalled = 0;
    // 2,000 checkpoints over 100 minutes: one signal per interval at most.
    for (let i = 1; i <= 2000; i++) if (await due(true, true, 3 + i * 3000)) signalled += 1;
    assert.equal(signalled, Math.floor((2000 * 3000) / CHECKPOINT_REPORT_INTERVAL_MS));
    assert.ok(asked > 1900, 'each unsignalled checkpoint asked whether a pause waits');
  });

  it('a pending pause gets every checkpoint at once; a failed query counts as pending', async () => {
    let pending: boolean | Error = false;
    const cadence = new ProgressCadence(true, async () => {
      if (pending instanceof Error) throw pending;
      return pending;
    });
    assert.equal(await cadence.due({ trained: true, newCheckpoint: true, now: 0 }), true);
    assert.equal(await cadence.due({ trained: true, newCheckpoint: true, now: MIN }), false);
    pending = true;
    assert.equal(await cadence.due({ trained: true, newCheckpoint: true, now: 2 * MIN }), true);
    pending = new Error('query timed out');
    assert.equal(await cadence.due({ trained: true, newCheckpoint: true, now: 3 * MIN }), true);
  });

  it('interval 0 (RAGEN_CHECKPOINT_SIGNAL_SECONDS=0): every checkpoint, no query', async () => {
    const cadence = new ProgressCadence(true, async () => assert.fail('no query needed'), 0);
    for (let now = 0; now < 5; now++)
      assert.equal(await cadence.due({ trained: true, newCheckpoint: true, now }), true);
  });

  it('a retried attempt that had trained does not signal the first step again', async () => {
    const cadence = new ProgressCadence(true, async () => false);
    assert.equal(await cadence.due({ trained: true, newCheckpoint: false, now: 0 }), false);
  });

  it('status shows the later of the query and the train heartbeat', () => {
    const status = { stage: 'train', lastStep: 1, lastCheckpointStep: 10 };
    assert.deepEqual(withTrainHeartbeat(status, { step: 17, lastCheckpointStep: 10 }), {
      stage: 'train',
      lastStep: 17,
      lastCheckpointStep: 10,
    });
    assert.deepEqual(withTrainHeartbeat(status, { step: 0, lastCheckpointStep: 0 }), status);
    assert.equal(withTrainHeartbeat(status, undefined), status);
  });
});
