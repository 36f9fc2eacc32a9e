import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import type { CheckpointRecord } from '../../domain/run/results.js';
import { readLedger, writeLedger } from '../campaign/campaign-checkpoints.js';
import { checkpointSteps, filesUnder, readTracker, recordSha256, sha256File } from './checkpoints.js';
import { checkpointPath } from '../../domain/spec/paths.js';
import { previousDetails } from '../common/heartbeat-loop.js';
import { type LedgerSource, restoreLedgerFromStore } from '../object-store/object-store-ledger.js';

/** Heartbeat between files of a large one too, so a shard of many GB does not miss heartbeatTimeout. */
const HEARTBEAT_EVERY_BYTES = 512 * 1024 * 1024;

export interface HashCheckpointsInput {
  checkpointDir: string;
  /** The ledger (a campaign's `checkpoints.json`, or a run's own): what is in it is never hashed again. */
  ledgerPath: string;
  /** Recorded as the new entries' firstSeenAt. */
  now: string;
  /** storage.objectStore: a ledger this archive dir lacks is fetched from there first. */
  ledgerSource?: LedgerSource;
}

/** Heartbeat details: the checkpoint being hashed and its files hashed so far. */
export interface HashHeartbeat {
  step: number;
  files: CheckpointRecord['files'];
}

export interface HashCheckpointsResult {
  /** Steps hashed by this call (each added to the ledger as soon as it was done). */
  hashed: number[];
  /** Every ledger entry at or below the tracker, with its hashes (for the manifest). */
  checkpoints: CheckpointRecord[];
}

/**
 * Hash the complete checkpoints (at or below the tracker) that the ledger does not hold yet, file
 * by file, streaming; each finished checkpoint is written to the ledger at once, so it is hashed
 * exactly once. Heartbeat {step, files} after every file (and every 512 MiB within one); a retry
 * after a worker crash resumes from those details: a file whose size and mtime are unchanged is not
 * read again. Long-running (profile `hashing`); reads only, besides the ledger; deletes nothing.
 */
export function createHashCheckpoints() {
  return async function hashCheckpoints(input: HashCheckpointsInput): Promise<HashCheckpointsResult> {
    const ctx = Context.current();
    await restoreLedgerFromStore(input.ledgerPath, input.ledgerSource);
    const ledger = await readLedger(input.ledgerPath, input.checkpointDir);
    const tracker = await readTracker(input.checkpointDir);
    const known = new Set(ledger.checkpoints.map((c) => c.step));
    const todo = (await checkpointSteps(input.checkpointDir)).filter(
      (s) => tracker !== undefined && s <= tracker && !known.has(s),
    );
    const before = previousDetails<HashHeartbeat>();
    for (const step of todo) {
      const path = checkpointPath(input.checkpointDir, step);
      const resumed = new Map((before?.step === step ? before.files : []).map((f) => [f.path, f]));
      const files: CheckpointRecord['files'] = [];
      for (const file of await filesUnder(path)) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`hashing ${path} cancelled`);
        const rel = relative(path, file);
        const { size, mtimeMs } = await stat(file);
        const prior = resumed.get(rel);
        if (prior && prior.bytes === size && prior.mtimeMs === mtimeMs) {
          files.push(prior);
          continue;
        }
        let sinceBeat = 0;
        const sha256 = await sha256File(file, (bytes) => {
          sinceBeat += bytes;
          if (sinceBeat < HEARTBEAT_EVERY_BYTES) return;
          sinceBeat = 0;
          ctx.heartbeat({ step, files } satisfies HashHeartbeat);
        });
        files.push({ path: rel, bytes: size, mtimeMs, sha256 });
        ctx.heartbeat({ step, files } satisfies HashHeartbeat);
      }
      ledger.checkpoints.push({ step, path, sha256: recordSha256(files), files, firstSeenAt: input.now });
      ledger.checkpoints.sort((a, b) => a.step - b.step);
      await writeLedger(input.ledgerPath, ledger);
    }
    const checkpoints = ledger.checkpoints
      .filter((c) => tracker !== undefined && c.step <= tracker)
      .map(({ firstSeenAt: _, ...record }) => record);
    return { hashed: todo, checkpoints };
  };
}
