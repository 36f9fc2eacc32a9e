import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';

/** What the follow loop shows: one line, and a bar where there is a count to reach. */
export interface FollowView {
  line: string;
  done?: number;
  total?: number;
}

/** `[#####-----]  50%`; empty when there is no total to measure against. */
export function progressBar(done: number | undefined, total: number | undefined, width = 20): string {
  if (done === undefined || !total || total <= 0) return '';
  const fraction = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(fraction * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`;
}

/** The text of one status line, time first: `12:03:04 [####------]  40% stage=train …`. */
export function statusText(view: FollowView, at: Date): string {
  const bar = progressBar(view.done, view.total);
  return `${at.toISOString().slice(11, 19)} ${bar ? `${bar} ` : ''}${view.line}`;
}

/**
 * Writes the status line: on a terminal it is redrawn in place (cut to the terminal's width);
 * elsewhere (a log file, a pipe) a plain line is printed each time the status changes.
 */
export class StatusLine {
  private last: string | undefined;
  private drawn = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {}

  show(view: FollowView, at = new Date()): void {
    const text = statusText(view, at);
    if (this.out.isTTY) {
      const width = this.out.columns || 120;
      this.out.write(`\r\x1b[2K${text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text}`);
      this.drawn = true;
    } else if (view.line !== this.last) {
      this.out.write(`${text}\n`);
    }
    this.last = view.line;
  }

  /** Ends the redrawn line so what follows starts on a new one. */
  end(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}

/**
 * Follow a workflow until it closes, showing `read()`'s view every `intervalMs`. A handle without
 * a run id follows the workflow across continue-as-new. A failed read (the first workflow task has
 * not run yet) keeps the previous line.
 */
export async function follow(
  handle: WorkflowHandle,
  read: () => Promise<FollowView>,
  { intervalMs = 1000, line = new StatusLine() }: { intervalMs?: number; line?: StatusLine } = {},
): Promise<void> {
  // The wait between rounds ends early when the workflow closes: no up-to-a-second tail per run.
  let closed = false;
  const closing = handle.result().then(
    () => (closed = true),
    () => (closed = true),
  );
  try {
    for (;;) {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING' && status.name !== 'CONTINUED_AS_NEW') return;
      try {
        line.show(await read());
      } catch {
        // not answerable yet: the next round asks again
      }
      await Promise.race([sleep(intervalMs), closing]);
      if (closed) return;
    }
  } finally {
    line.end();
  }
}
