import { mkdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { type NodeLedger, type NodeLedgerStore, parseLedger } from '../../domain/node-health/node-ledger.js';

const LOCK_STALE_MS = 30_000;

/**
 * The local backend's node ledger: `<runRoot>/node-suspects.json`, shared by every worker and CLI
 * of this host. An update holds a lock directory (mkdir is atomic) and writes by rename, so two
 * writers never lose each other's findings and a crash never leaves half a file.
 */
export class NodeLedgerFile implements NodeLedgerStore {
  readonly where: string;
  private readonly lock: string;

  constructor(runRoot: string) {
    this.where = join(runRoot, 'node-suspects.json');
    this.lock = `${this.where}.lock`;
  }

  async read(): Promise<NodeLedger> {
    const text = await readFile(this.where, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    return parseLedger(text, this.where);
  }

  async update(change: (ledger: NodeLedger) => NodeLedger): Promise<NodeLedger> {
    await this.acquire();
    try {
      const next = change(await this.read());
      const tmp = `${this.where}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`);
      await rename(tmp, this.where);
      return next;
    } finally {
      await rmdir(this.lock).catch(() => undefined);
    }
  }

  private async acquire(): Promise<void> {
    await mkdir(join(this.where, '..'), { recursive: true });
    for (;;) {
      try {
        await mkdir(this.lock);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        // A writer that died holding it: its lock is older than any update takes.
        const age = await stat(this.lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > LOCK_STALE_MS) await rmdir(this.lock).catch(() => undefined);
        else await sleep(20);
      }
    }
  }
}
