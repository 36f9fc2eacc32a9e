import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

export type DeadlineResult<T> = { timedOut: false; value: T } | { timedOut: true };

/**
 * Run `fn` under a durable timer: when the timer fires first, `fn`'s scope is cancelled (its
 * activities receive cancellation) and the result says timedOut. A cancellation from outside
 * (the user's cancel) still propagates as a cancellation.
 */
export async function withDeadline<T>(ms: number, fn: () => Promise<T>): Promise<DeadlineResult<T>> {
  let timedOut = false;
  const work = new CancellationScope();
  const timer = new CancellationScope();
  const timerDone = timer
    .run(async () => {
      await sleep(ms);
      timedOut = true;
      work.cancel();
    })
    .catch(() => undefined);
  try {
    return { timedOut: false, value: await work.run(fn) };
  } catch (err) {
    if (timedOut && isCancellation(err)) return { timedOut: true };
    throw err;
  } finally {
    timer.cancel();
    await timerDone;
  }
}
