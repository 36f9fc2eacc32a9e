/**
 * Delays between polls of something that is usually ready soon (nodes joining, a short Ray job):
 * every 250 ms for the first 10 s, then growing by half each time up to the configured interval.
 * A short wait is seen within a quarter second; a long one costs no more requests than before.
 */
export function pollDelays(maxMs: number, { fastMs = 250, fastForMs = 10_000 } = {}): () => number {
  let elapsed = 0;
  let delay = Math.min(fastMs, maxMs);
  return () => {
    const next = elapsed < fastForMs ? Math.min(fastMs, maxMs) : Math.min(Math.ceil(delay * 1.5), maxMs);
    delay = next;
    elapsed += next;
    return next;
  };
}
