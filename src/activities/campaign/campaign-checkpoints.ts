import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { permanent } from '../common/failures.js';
import {
  CheckpointLedgerSchema,
  type CheckpointLedger,
  type LatestCheckpoint,
} from '../../domain/campaign/campaign.js';
import type { CheckpointRecord } from '../../domain/run/results.js';
import { checkpointSteps, filesUnder, hashCheckpoint, readTracker } from '../checkpoints/checkpoints.js';
import { heartbeatPerFile } from '../common/heartbeat-loop.js';
import { parseJsonText } from '../../domain/spec/json-text.js';
import { readObjectStoreIndex } from '../object-store/object-store-index.js';
import { fetchCheckpoint } from '../object-store/object-store-fetch.js';
import { type LedgerSource, restoreLedgerFromStore } from '../object-store/object-store-ledger.js';

/**
 * The campaign's ledger, validated: empty when there is none; a corrupt one, or (with
 * `checkpointDir`) one naming checkpoints outside this campaign's directory, is a permanent
 * StateFileInvalid error naming the file, which is left as it is (never rewritten, never trusted).
 */
export async function readLedger(path: string, checkpointDir?: string): Promise<CheckpointLedger> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { checkpoints: [] };
  }
  const refuse = (why: string) =>
    permanent(
      ErrorTypes.StateFileInvalid,
      `campaign ledger ${path} ${why}; it was left as it is and no checkpoint was resumed from it: restore it, or move it aside to have the checkpoints hashed again`,
    );
  const parsed = parseJsonText(text, CheckpointLedgerSchema, 'a checkpoint ledger');
  if (!parsed.ok) throw refuse(parsed.why);
  if (checkpointDir !== undefined) {
    const foreign = parsed.data.checkpoints.find((c) => {
      const rel = relative(checkpointDir, c.path);
      return !rel || rel.startsWith('..') || isAbsolute(rel);
    });
    if (foreign)
      throw refuse(
        `names checkpoint ${foreign.path}, outside this campaign's checkpoint dir ${checkpointDir}`,
      );
  }
  return parsed.data;
}

/** The ledger only grows: an entry, once written, keeps the hash it had when first seen. */
export async function writeLedger(path: string, ledger: CheckpointLedger): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(ledger, null, 2)}\n`);
  await rename(tmp, path);
}

/**
 * Whether a checkpoint's files are still the ones the ledger hashed, without reading them: the same
 * relative paths, sizes and (where recorded) modification times. Undefined when unchanged.
 */
export async function filesChanged(entry: CheckpointRecord): Promise<string | undefined> {
  let present: string[];
  try {
    present = (await filesUnder(entry.path)).map((f) => f.slice(entry.path.length + 1));
  } catch {
    return `${entry.path} is unreadable`;
  }
  const recorded = entry.files.map((f) => f.path).sort();
  if (present.join('\n') !== recorded.join('\n'))
    return `its file list differs (${present.length} files now, ${recorded.length} hashed)`;
  for (const file of entry.files) {
    const now = await stat(join(entry.path, file.path));
    if (now.size !== file.bytes) return `${file.path} is ${now.size} bytes, was ${file.bytes}`;
    if (file.mtimeMs !== undefined && now.mtimeMs !== file.mtimeMs)
      return `${file.path} was modified after it was hashed`;
  }
  return undefined;
}

/**
 * Between attempts: find the latest COMPLETE checkpoint of a campaign. A checkpoint is complete when
 * it is at or below the step the tracker file names (verl writes the tracker last) and the ledger
 * holds its sha256 (hashed once, by the hashCheckpoints activity). The resume candidate's files must
 * still have the paths, sizes and times they had when hashed; one whose files changed or vanished is
 * reported as untrusted and skipped (the next lower one is tried). Idempotent; reads only, besides
 * the ledger file, and deletes nothing.
 * A ledger entry the volume lost (a fresh volume, another cluster) that the archive copied to
 * storage.objectStore (object-store.json next to the ledger) is fetched from there, verified
 * against the ledger's sha256, and is then the candidate like any other (object-store-fetch.ts).
 * A complete checkpoint the ledger does not hold yet is hashed here (normally there is none: the
 * workflows run hashCheckpoints first), heartbeating `{step, file}` per file.
 */
export function createLatestCompleteCheckpoint() {
  return async function latestCompleteCheckpoint(input: {
    checkpointDir: string;
    ledgerPath: string;
    now: string;
    /** storage.objectStore: a ledger this archive dir lacks is fetched from there first. */
    ledgerSource?: LedgerSource;
  }): Promise<LatestCheckpoint> {
    await restoreLedgerFromStore(input.ledgerPath, input.ledgerSource);
    const ledger = await readLedger(input.ledgerPath, input.checkpointDir);
    const tracker = await readTracker(input.checkpointDir);
    const present = new Set(await checkpointSteps(input.checkpointDir));
    const known = new Map(ledger.checkpoints.map((c) => [c.step, c]));
    // Hashed in this call: their ledger hash is their current hash (checkpoints can be many GB).
    const hashedNow = new Set<number>();
    // Normally none: the hashCheckpoints activity ran first (heartbeating, resumable). A fallback.
    for (const step of [...present].filter((s) => tracker !== undefined && s <= tracker && !known.has(s))) {
      const entry = {
        ...(await hashCheckpoint(input.checkpointDir, step, heartbeatPerFile(step))),
        firstSeenAt: input.now,
      };
      ledger.checkpoints.push(entry);
      known.set(step, entry);
      hashedNow.add(step);
    }
    if (hashedNow.size > 0) {
      ledger.checkpoints.sort((a, b) => a.step - b.step);
      await writeLedger(input.ledgerPath, ledger);
    }
    const untrusted: LatestCheckpoint['untrusted'] = [];
    let latest: LatestCheckpoint['latest'];
    const deleted = new Set((ledger.deleted ?? []).map((d) => d.step));
    const index = await readObjectStoreIndex(input.ledgerPath);
    for (const entry of [...ledger.checkpoints].reverse()) {
      const stored = index?.checkpoints.some((c) => c.step === entry.step && c.sha256 === entry.sha256);
      if (!latest && !present.has(entry.step) && index && stored) {
        // Verified against the ledger while fetched; the entry's file times become the new files'.
        entry.files = await fetchCheckpoint(index, entry, input.checkpointDir);
        await writeLedger(input.ledgerPath, ledger);
        present.add(entry.step);
        hashedNow.add(entry.step);
      }
      if (!present.has(entry.step) && deleted.has(entry.step)) continue; // removed by storage.retain
      if (!present.has(entry.step) && stored) continue; // not lost: fetched when it is the candidate
      if (!present.has(entry.step)) {
        untrusted.push({ step: entry.step, reason: `${entry.path} is gone` });
        continue;
      }
      if (latest) continue;
      // Hashed once, when first seen: the candidate is checked by its files' sizes and times.
      const changed = hashedNow.has(entry.step) ? undefined : await filesChanged(entry);
      if (changed) {
        untrusted.push({
          step: entry.step,
          reason: `files of ${entry.path} changed since ${entry.firstSeenAt}: ${changed} (ledger sha256 ${entry.sha256.slice(0, 12)})`,
        });
        continue;
      }
      latest = { step: entry.step, path: entry.path, sha256: entry.sha256 };
    }
    return {
      latest,
      checkpoints: ledger.checkpoints.map((c) => ({ step: c.step, sha256: c.sha256 })),
      untrusted: untrusted.reverse(),
    };
  };
}
