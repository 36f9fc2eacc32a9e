import { Context } from '@temporalio/activity';
import { waitUntil } from './wait.js';

/**
 * The steps a stand-in trainer may take, released by the test: the trainer waits before each step
 * the test has not released (heartbeating, so a cancel reaches it there), and the test waits until
 * the trainer stands at the gate. Nothing depends on how fast either side runs.
 */
export class StepGate {
  /** The last step the trainer may take. */
  private open: number;
  /** The step the trainer waits to take (0: not waiting). */
  waitingAt = 0;

  constructor(openTo = 0) {
    this.open = openTo;
  }

  /** Lets the trainer take every step up to `step` (Infinity: run to the end). */
  releaseTo(step: number): void {
    this.open = Math.max(this.open, step);
  }

  /** The trainer's side: returns once `step` is released; a cancel of the activity throws here. */
  async enter(step: number): Promise<void> {
    const ctx = Context.current();
    while (step > this.open) {
      this.waitingAt = step;
      ctx.heartbeat();
      await ctx.sleep(20); // rejects with the cancellation once a heartbeat brought it
    }
    this.waitingAt = 0;
  }

  /** The test's side: resolves once the trainer waits before `step` (every earlier step is taken). */
  async held(step: number): Promise<void> {
    await waitUntil(`the stand-in trainer to wait before step ${step}`, () => this.waitingAt === step);
  }
}
