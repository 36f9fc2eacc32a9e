import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits until `probe` answers a value (not undefined, not false; a throw counts as not yet), asking
 * every `everyMs`. The bound is a backstop for a state that never comes, far above any wait on a
 * loaded machine: the test waits for a state, never for an amount of time.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 180_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve()
      .then(probe)
      .catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`waited ${timeoutMs / 1000} s for ${what}; it never came`);
    await sleep(everyMs);
  }
}
