import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStepLine, summarizeTrainLog } from '../../src/activities/train-log.js';

describe('verl console line parser', () => {
  it('reads step and metrics, with a Ray log prefix and numpy 2 values', () => {
    const parsed = parseStepLine(
      '(TaskRunner pid=123, ip=10.0.0.1) step:7 - train/CoordSokoban/success:0.5 - val-env/CoordSokoban/pass@1:np.float64(0.25) - timing_s/step:0.2',
    );
    assert.deepEqual(parsed, {
      step: 7,
      metrics: {
        'train/CoordSokoban/success': 0.5,
        'val-env/CoordSokoban/pass@1': 0.25,
        'timing_s/step': 0.2,
      },
    });
  });

  it('ignores lines that are not step lines', () => {
    assert.equal(parseStepLine('Total training steps: 20'), undefined);
    assert.equal(parseStepLine('local_global_step_folder: /x/global_step_10'), undefined);
  });

  it('summarizes the last step and early stops', () => {
    const logs = [
      'step:0 - val-env/CoordSokoban/success:0.1',
      'step:1 - critic/score/mean:1',
      'step:2 - early_stopped/reward_variance_collapse:1.0',
      '',
    ].join('\n');
    const summary = summarizeTrainLog(logs);
    assert.equal(summary.lastStep, 2);
    assert.deepEqual(summary.earlyStopped, ['early_stopped/reward_variance_collapse']);
  });

  it('does not take an early_stopped/* metric logged as 0 for a stop', () => {
    const summary = summarizeTrainLog(
      'step:1 - early_stopped/empty_filtered_steps:0.0 - critic/score/mean:1\n',
    );
    assert.deepEqual(summary.earlyStopped, []);
  });
});

describe('incremental train log parsing', () => {
  it('gives the same state fed in pieces as fed at once, and keeps failure evidence from anywhere', async () => {
    const { emptyTrainLogState, feedTrainLog, failureText } =
      await import('../../src/activities/train-log.js');
    const lines = [
      'step:0 - val-env/CoordSokoban/success:0.1',
      "OSError: [Errno 28] No space left on device: '/ckpt/x'",
      ...Array.from(
        { length: 200 },
        (_, i) => `step:${i + 1} - critic/score/mean:${i} - actor/loss:${1 / (i + 1)}`,
      ),
      'step:200 - early_stopped/low_validation_success:1.0',
    ];
    const whole = emptyTrainLogState();
    feedTrainLog(whole, `${lines.join('\n')}\n`);
    const pieces = emptyTrainLogState();
    for (let i = 0; i < lines.length; i += 7) feedTrainLog(pieces, `${lines.slice(i, i + 7).join('\n')}\n`);
    assert.deepEqual(pieces, whole);
    assert.equal(whole.lastStep, 200);
    assert.deepEqual(whole.earlyStopped, ['early_stopped/low_validation_success']);
    assert.equal(whole.summary['critic/score/mean']?.best, 199);
    assert.equal(whole.summary['actor/loss']?.bestStep, 200);
    assert.ok(whole.tail.length <= 60);
    assert.match(
      failureText(whole),
      /No space left on device/,
      'evidence kept though it scrolled out of the tail',
    );
  });
});
