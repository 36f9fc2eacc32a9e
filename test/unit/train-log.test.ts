import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStepLine, summarizeTrainLog } from '../../src/activities/train/train-log.js';

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

  // Lines as verl 0.6.1's concat_dict_to_str prints them (`step:N` + ` - key:pformat(value)`), and
  // text that only looks like one. undefined: not a step line (no progress counted).
  const table: [string, string, ReturnType<typeof parseStepLine>][] = [
    [
      'numpy 2 integer and float scalars',
      'step:3 - response_length/max:np.int64(512) - actor/entropy:np.float32(1.25) - actor/lr:1e-06',
      { step: 3, metrics: { 'response_length/max': 512, 'actor/entropy': 1.25, 'actor/lr': 1e-6 } },
    ],
    [
      'metric keys with spaces',
      '(TaskRunner pid=88) step:4 - train/Coord Sokoban/success:0.5 - timing_s/update actor:np.float64(2.5)',
      { step: 4, metrics: { 'train/Coord Sokoban/success': 0.5, 'timing_s/update actor': 2.5 } },
    ],
    [
      'nan and booleans keep the line, without a nan metric',
      'step:5 - critic/vf_explained_var:nan - early_stopped/x:True - a:np.float64(nan)',
      { step: 5, metrics: { 'early_stopped/x': 1 } },
    ],
    ['a bare step line', '(TaskRunner pid=1, ip=10.0.0.2) step:6', { step: 6, metrics: {} }],
    [
      'a colored Ray prefix',
      '\x1b[36m(TaskRunner pid=9)\x1b[0m step:7 - a:1',
      { step: 7, metrics: { a: 1 } },
    ],
    [
      "a model's sample output ending in step:N",
      "(TaskRunner pid=88) [sample] Turn 2: <answer>Left</answer> I'll push the box at step:12",
      undefined,
    ],
    ['sample text ending in step:N after a dash', 'the plan - go down - step:9', undefined],
    ['sample text that starts like a step line', 'step:3 - I moved the box left', undefined],
    ['a metric whose value is no number', 'step:3 - reward:high', undefined],
  ];
  for (const [name, line, want] of table)
    it(`table: ${name}`, () => assert.deepEqual(parseStepLine(line), want));

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
      await import('../../src/activities/train/train-log.js');
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
