import { open, stat } from 'node:fs/promises';
import type { RayHeadApi } from '../backends/ray/dashboard-client.js';
import { RayHttpError } from '../backends/ray/http.js';
import { alignTail, anchorOf, countTailLines, splitWholeLines } from '../domain/log-tail.js';

/** The anchor: the consumed log's last bytes (whole lines) that a tail must contain. */
const ANCHOR_BYTES = 4096;
/** Smallest and largest window asked of the tail endpoint, in lines. */
const MIN_WINDOW_LINES = 1000;
const MAX_WINDOW_LINES = 1_000_000;

export interface LogRead {
  /** New whole lines (a partial last line waits for the next poll). */
  lines: string;
  /** Bytes the head sent for this poll (all requests). */
  bytesRead: number;
  /** True when more lines were written since the last poll than the largest window: some are missing. */
  gap: boolean;
  /** True when the anchor occurs twice in the window: a repeated line may be shown twice. */
  ambiguous: boolean;
}

/**
 * Reads a Ray job's driver log incrementally: each poll asks the head for the log's last lines
 * (Ray's State API, `/api/v0/logs/file?node_id&filename=job-driver-<id>.log&lines=N`, the same on
 * the local backend and on KubeRay) and keeps only what follows the bytes already consumed. The
 * window follows the log's pace (twice the lines of the last poll, at least 1,000), so the bytes
 * read per poll depend on how fast the job writes, not on how long the log is. Every new byte is
 * appended to a copy on storage (`copyPath`), which `logs` reads after teardown; after a restart
 * the copy's size and last bytes say where to continue, without reading the log again.
 */
export class JobLogReader {
  /** Bytes of the log consumed (its offset, as far as it is known) and of the copy written. */
  private consumed: number;
  private copied: number;
  private anchor: Buffer;
  private window = MIN_WINDOW_LINES;

  private constructor(
    private readonly head: RayHeadApi,
    private readonly submissionId: string,
    private readonly copyPath: string,
    consumed: number,
    anchor: Buffer,
  ) {
    this.consumed = consumed;
    this.copied = consumed;
    this.anchor = anchor;
  }

  /** A reader that continues the copy at `copyPath` (created when absent). */
  static async resume(head: RayHeadApi, submissionId: string, copyPath: string): Promise<JobLogReader> {
    const size = await stat(copyPath).then(
      (s) => s.size,
      () => 0,
    );
    let anchor = Buffer.alloc(0);
    if (size > 0) {
      const file = await open(copyPath, 'r');
      try {
        const length = Math.min(size, ANCHOR_BYTES * 2);
        const buf = Buffer.alloc(length);
        await file.read(buf, 0, length, size - length);
        anchor = Buffer.from(anchorOf(buf, ANCHOR_BYTES));
      } finally {
        await file.close();
      }
    }
    return new JobLogReader(head, submissionId, copyPath, size, anchor);
  }

  /** Bytes of the copy written so far. */
  get bytesCopied(): number {
    return this.copied;
  }

  /**
   * New whole lines since the last poll; `driverNodeId` from the job's info (absent: no log yet).
   * `final` (the job ended, its log is complete): a last line without `\n` is taken too.
   */
  async poll(driverNodeId: string | undefined, options: { final?: boolean } = {}): Promise<LogRead> {
    const read: LogRead = { lines: '', bytesRead: 0, gap: false, ambiguous: false };
    if (!driverNodeId) return read;
    for (;;) {
      const tail = await this.head.jobLogTail(this.submissionId, driverNodeId, this.window).catch((err) => {
        // The driver has not written its log file yet: Ray answers 500 "... is not found".
        if (err instanceof RayHttpError && /not found/i.test(err.body)) return Buffer.alloc(0);
        throw err;
      });
      read.bytesRead += tail.length;
      const aligned = alignTail(tail, this.window, this.consumed, this.anchor);
      if (aligned.kind === 'shrunk') {
        // Not the log that was copied (a job resubmitted under the same id): start over, say so.
        await this.append(
          Buffer.from(`[ragen-orchestrator: the driver log restarted; the copy continues with the new log]\n`),
          false,
        );
        this.consumed = 0;
        this.anchor = Buffer.alloc(0);
        continue;
      }
      if (aligned.kind === 'short' && this.window < MAX_WINDOW_LINES) {
        this.window = Math.min(MAX_WINDOW_LINES, this.window * 4);
        continue;
      }
      let fresh: Buffer;
      if (aligned.kind === 'short') {
        // More lines came than the largest window: keep what the window holds and say so.
        read.gap = true;
        await this.append(
          Buffer.from(
            `[ragen-orchestrator: more than ${MAX_WINDOW_LINES} lines were written between two reads; lines before these are missing]\n`,
          ),
          false,
        );
        fresh = tail;
      } else {
        fresh = aligned.fresh;
        read.ambiguous = aligned.ambiguous;
      }
      const whole = options.final ? fresh : splitWholeLines(fresh).whole;
      if (whole.length > 0) {
        await this.append(whole);
        read.lines = whole.toString('utf8');
      }
      const newLines = countTailLines(whole);
      this.window = Math.min(
        MAX_WINDOW_LINES,
        Math.max(MIN_WINDOW_LINES, 2 * (newLines + countTailLines(this.anchor))),
      );
      return read;
    }
  }

  /** Append to the copy; `ofLog`: the bytes are the log's (a note of ours is not). */
  private async append(bytes: Buffer, ofLog = true): Promise<void> {
    const file = await open(this.copyPath, 'a');
    try {
      await file.write(bytes);
    } finally {
      await file.close();
    }
    this.copied += bytes.length;
    if (!ofLog) return;
    this.consumed += bytes.length;
    this.anchor = Buffer.from(
      anchorOf(
        bytes.length >= ANCHOR_BYTES ? bytes : Buffer.concat([this.anchor, bytes]),
        ANCHOR_BYTES,
      ),
    );
  }
}
