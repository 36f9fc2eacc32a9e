import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusLine, progressBar, statusText } from '../../src/cli/follow.js';
import { campaignView, sweepView } from '../../src/cli/views.js';

/** A stand-in terminal or pipe: collects what is written. */
function stream(isTTY: boolean, columns = 60) {
  const out = { isTTY, columns, written: [] as string[], write: (s: string) => out.written.push(s) > 0 };
  return out;
}

describe('the follow loop’s status line', () => {
  it('draws a progress bar for steps', () => {
    assert.equal(progressBar(0, 10, 10), '[----------]   0%');
    assert.equal(progressBar(5, 10, 10), '[#####-----]  50%');
    assert.equal(progressBar(12, 10, 10), '[##########] 100%');
    assert.equal(progressBar(3, undefined), '');
    assert.equal(progressBar(3, 0), '');
    const at = new Date('2026-12-03T12:03:04Z');
    assert.equal(
      statusText({ line: 'stage=train', done: 1, total: 4 }, at),
      '12:03:04 [#####---------------]  25% stage=train',
    );
    assert.equal(statusText({ line: 'stage=join' }, at), '12:03:04 stage=join');
  });

  it('prints plain lines only when the status changes when not on a terminal', () => {
    const out = stream(false);
    const line = new StatusLine(out as unknown as NodeJS.WriteStream);
    line.show({ line: 'a' });
    line.show({ line: 'a' });
    line.show({ line: 'b' });
    line.end();
    assert.equal(out.written.length, 2);
    assert.ok(out.written.every((w) => w.endsWith('\n') && !w.includes('\r')));
  });

  it('redraws one line in place on a terminal, cut to its width, and ends it with a newline', () => {
    const out = stream(true, 40);
    const line = new StatusLine(out as unknown as NodeJS.WriteStream);
    line.show({ line: 'x'.repeat(100), done: 1, total: 2 });
    line.show({ line: 'y' });
    line.end();
    assert.equal(out.written.length, 3);
    assert.ok(out.written.slice(0, 2).every((w) => w.startsWith('\r\x1b[2K') && !w.includes('\n')));
    assert.ok((out.written[0] ?? '').length <= '\r\x1b[2K'.length + 39);
    assert.equal(out.written[2], '\n');
  });

  it('counts sweep children and campaign steps for the bar', () => {
    const sweep = sweepView({
      running: 1,
      total: 8,
      succeeded: 2,
      failed: 1,
      cancelled: 1,
      stoppedByFailureBudget: false,
    } as never);
    assert.deepEqual([sweep.done, sweep.total], [4, 8]);
    assert.match(sweep.line, /done=4\/8 .* best=-/);
    const campaign = campaignView({
      phase: 'running',
      attempt: 2,
      step: 6,
      totalTrainingSteps: 10,
      lastCheckpointStep: 4,
      gpuSeconds: 12.4,
      paused: false,
    } as never);
    assert.deepEqual([campaign.done, campaign.total], [6, 10]);
    assert.equal(campaign.line, 'phase=running attempt=2 step=6/10 checkpoint=4 gpu-seconds=12');
  });
});
