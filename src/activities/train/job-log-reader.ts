import { setTimeout as sleep } from 'node:timers/promises';
import { open, stat } from 'node:fs/promises';
import type { RayHeadApi } from '../../backends/ray/dashboard-client.js';
import { LOG_FOLLOW_INTERVAL_S } from '../../backends/ray/dashboard-client.js';
import { RayHttpError } from '../../backends/ray/http.js';
import { isTransientFailure } from '../../errors/external-failures.js';
import { writingToArchive } from './archive-disk-full.js';

/**
 * After the job ended its log is complete; the agent sends what it has not sent within one follow
 * interval. Wait that long (plus a margin) and until the stream was quiet for QUIET_MS.
 */
const FINAL_WAIT_MS = LOG_FOLLOW_INTERVAL_S * 1000 + 250;
const QUIET_MS = 250;

export interface LogRead {
  /** New whole lines (a partial last line waits for the next poll, unless `final`). */
  lines: string;
  /** Bytes the head sent since the last poll. */
  bytesRead: number;
}

/**
 * Reads a Ray job's driver log incrementally: one HTTP stream (Ray's State API follows the file,
 * the same on the local backend and on KubeRay) delivers every byte once, as it is written; each
 * poll takes what arrived since the last one, so the work per poll depends on how fast the job
 * writes, not on how long the log is. New whole lines are appended to a copy on storage
 * (`copyPath`), which `logs` reads after teardown. Ray 2.60's log API has no byte offset: after a
 * restart (a retried activity, a broken connection) the stream starts at byte 0 again and the bytes
 * the copy already holds are skipped unparsed and unwritten; the parse state comes from storage.
 */
export class JobLogReader {
  private stream: { close(): void } | undefined;
  private arrived: Buffer[] = [];
  private arrivedBytes = 0;
  private lastDataAt = 0;
  /** Bytes of the current stream received so far; the first `copied` of them are already in the copy. */
  private received = 0;
  /** The current stream's start, for the skip. */
  private skipUntil = 0;
  private carry = Buffer.alloc(0);

  private constructor(
    private readonly head: RayHeadApi,
    private readonly submissionId: string,
    private readonly copyPath: string,
    private copied: number,
  ) {}

  /** A reader that continues the copy at `copyPath` (created when absent). */
  static async resume(head: RayHeadApi, submissionId: string, copyPath: string): Promise<JobLogReader> {
    const size = await stat(copyPath).then(
      (s) => s.size,
      () => 0,
    );
    return new JobLogReader(head, submissionId, copyPath, size);
  }

  /** Bytes of the copy written so far (= bytes of the log consumed). */
  get bytesCopied(): number {
    return this.copied;
  }

  /**
   * New whole lines since the last poll; `driverNodeId` from the job's info (absent: no log yet).
   * `final` (the job ended, its log is complete): wait until the stream is quiet, take a last line
   * without `\n` too, and close the stream.
   */
  async poll(driverNodeId: string | undefined, options: { final?: boolean } = {}): Promise<LogRead> {
    if (!driverNodeId) return { lines: '', bytesRead: 0 };
    if (!this.stream && !(await this.connect(driverNodeId, options.final === true)))
      return { lines: '', bytesRead: 0 };
    if (options.final) {
      const until = Date.now() + FINAL_WAIT_MS;
      while (this.stream && (Date.now() < until || Date.now() - this.lastDataAt < QUIET_MS)) await sleep(50);
    }
    const bytesRead = this.arrivedBytes;
    const data = Buffer.concat([this.carry, ...this.arrived]);
    this.arrived = [];
    this.arrivedBytes = 0;
    const end = options.final ? data.length : data.lastIndexOf(0x0a) + 1;
    const whole = data.subarray(0, end);
    this.carry = Buffer.from(data.subarray(end));
    if (whole.length > 0) await this.append(whole);
    if (options.final) this.close();
    return { lines: whole.toString('utf8'), bytesRead };
  }

  /** Stop following (the activity ends). */
  close(): void {
    this.stream?.close();
    this.stream = undefined;
  }

  /** false: nothing to read this poll (no log file yet; or the head is slow and the job still runs). */
  private async connect(driverNodeId: string, final: boolean): Promise<boolean> {
    this.received = 0;
    this.skipUntil = this.copied;
    this.carry = Buffer.alloc(0);
    this.lastDataAt = Date.now();
    try {
      this.stream = await this.head.followJobLog(
        this.submissionId,
        driverNodeId,
        (chunk) => this.onData(chunk),
        () => {
          // Closed by the head or the network: the next poll reconnects and skips what was copied.
          this.stream = undefined;
          this.arrived = [];
          this.arrivedBytes = 0;
        },
      );
      return true;
    } catch (err) {
      // The driver has not written its log file yet: Ray answers 500 naming the missing file.
      if (err instanceof RayHttpError && /not found/i.test(err.body)) return false;
      // A slow head while the job runs: the next poll connects again. The final read must not
      // come back short (the run's last steps), so there the activity's retry reads it again.
      if (!final && isTransientFailure(err)) return false;
      throw err;
    }
  }

  private onData(chunk: Buffer): void {
    this.lastDataAt = Date.now();
    const start = this.received;
    this.received += chunk.length;
    this.arrivedBytes += chunk.length;
    if (this.received <= this.skipUntil) return; // already in the copy
    this.arrived.push(start >= this.skipUntil ? chunk : chunk.subarray(this.skipUntil - start));
  }

  private async append(bytes: Buffer): Promise<void> {
    const file = await open(this.copyPath, 'a');
    try {
      await writingToArchive(this.copyPath, () => file.write(bytes));
    } finally {
      await file.close();
    }
    this.copied += bytes.length;
  }
}
