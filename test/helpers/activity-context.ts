import { MockActivityEnvironment } from '@temporalio/testing';

/**
 * An activity function run in the SDK's mock activity context (no server): what it heartbeats is
 * recorded, so a test can check that long work stays alive.
 */
export function inActivityContext<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const env = new MockActivityEnvironment();
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return { run: (...args: A) => env.run(fn, ...args) as Promise<R>, heartbeats };
}
