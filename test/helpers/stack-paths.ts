/**
 * Recorded histories keep the stack traces of failures; their frames name files by absolute path,
 * which is the recording machine's folder. Cut each such path to its part inside a checkout
 * (from `node_modules/`, `src/` or `test/` on), so no history names a folder of the machine.
 */
const MACHINE_PREFIX = /(?<=^|[\s(])(?:file:\/\/)?\/(?:[^\s()/:]+\/)*?(?=(?:node_modules|src|test)\/)/g;

/** A stack trace whose frames name files relative to the checkout. */
export const withoutMachinePaths = (stack: string): string => stack.replace(MACHINE_PREFIX, '');

/** Rewrites every `stackTrace` string in a history (or any part of one) in place. */
export function stripStackPaths(value: unknown): void {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return;
  const record = value as Record<string, unknown>;
  for (const [key, inner] of Object.entries(record)) {
    if (key === 'stackTrace' && typeof inner === 'string') record[key] = withoutMachinePaths(inner);
    else stripStackPaths(inner);
  }
}
