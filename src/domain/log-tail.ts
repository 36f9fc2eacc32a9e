/**
 * Reading a growing job log through Ray's State API tail (`/api/v0/logs/file?lines=N`), which
 * answers the last N lines and no byte offsets. A reader keeps what it consumed (a byte count and
 * an anchor: the last bytes it consumed, whole lines) and finds where the new bytes begin in the
 * tail. Pure: unit-tested without Ray.
 */

/** Lines as Ray's tail counts them: every `\n`, plus a last line without one. */
export function countTailLines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) n++;
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) n++;
  return n;
}

export type TailAlignment =
  /** `fresh`: the bytes after what was consumed (may end in a partial line). */
  | { kind: 'aligned'; fresh: Buffer; ambiguous: boolean }
  /** The window does not reach back to what was consumed: ask for more lines. */
  | { kind: 'short' }
  /** The log is shorter than what was consumed: it was replaced or truncated. */
  | { kind: 'shrunk' };

/**
 * Where the new bytes begin in `tail`, the answer to a request for the last `requestedLines`.
 * - Fewer lines than asked: the tail is the whole log, so the new bytes are exactly those past
 *   `consumedBytes`.
 * - Otherwise the anchor (the consumed log's last bytes, whole lines) is searched in the tail; the
 *   first occurrence wins, so a log that repeats itself may show a line twice but never loses one
 *   (`ambiguous` says so).
 */
export function alignTail(
  tail: Buffer,
  requestedLines: number,
  consumedBytes: number,
  anchor: Buffer,
): TailAlignment {
  if (countTailLines(tail) < requestedLines) {
    if (tail.length < consumedBytes) return { kind: 'shrunk' };
    return { kind: 'aligned', fresh: tail.subarray(consumedBytes), ambiguous: false };
  }
  if (consumedBytes === 0 || anchor.length === 0) return { kind: 'short' };
  let at = tail.indexOf(anchor);
  while (at > 0 && tail[at - 1] !== 0x0a) at = tail.indexOf(anchor, at + 1); // only at a line start
  if (at < 0) return { kind: 'short' };
  const end = at + anchor.length;
  return { kind: 'aligned', fresh: tail.subarray(end), ambiguous: tail.indexOf(anchor, at + 1) >= 0 };
}

/** The consumed bytes' last whole lines, at most `maxBytes` (a longer single line: its last bytes). */
export function anchorOf(consumedTail: Buffer, maxBytes: number): Buffer {
  if (consumedTail.length <= maxBytes) return consumedTail;
  const cut = consumedTail.length - maxBytes;
  const lineStart = consumedTail.indexOf(0x0a, cut - 1);
  return lineStart >= 0 && lineStart < consumedTail.length - 1
    ? consumedTail.subarray(lineStart + 1)
    : consumedTail.subarray(cut);
}

/** The prefix of `bytes` that ends at its last `\n` (whole lines), and the partial rest. */
export function splitWholeLines(bytes: Buffer): { whole: Buffer; partial: Buffer } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  return { whole: bytes.subarray(0, end), partial: bytes.subarray(end) };
}
