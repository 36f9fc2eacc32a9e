import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CheckpointLedgerSchema, type CheckpointLedger, type LatestCheckpoint } from '../spec/campaign.js';
import { checkpointSteps, hashCheckpoint, readTracker } from './checkpoints.js';
import { heartbeatPerFile } from './heartbeat-loop.js';

export async function readLedger(path: string): Promise<CheckpointLedger> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { checkpoints: [] };
  }
  return CheckpointLedgerSchema.parse(JSON.parse(text));
}

/** The ledger only grows: an entry, once written, keeps the hash it had when first seen. */
async function writeLedger(path: string, ledger: CheckpointLedger): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(ledger, null, 2)}\n`);
  await rename(tmp, path);
}

/**
 * Between attempts: find the latest COMPLETE checkpoint of a campaign. A checkpoint is complete when
 * it is at or below the step the tracker file names (verl writes the tracker last) and its files
 * have the sha256 the ledger recorded when the campaign first saw it. New checkpoints are hashed and
 * added to the ledger; the resume candidate is re-hashed unless it was just hashed, and one whose files changed or vanished is
 * reported as untrusted and skipped (the next lower one is tried). Idempotent; reads and hashes only,
 * besides the ledger file, and deletes nothing. Hashing profile: one heartbeat `{step, file}` per
 * hashed file.
 */
export function createLatestCompleteCheckpoint() {
  return async function latestCompleteCheckpoint(input: { checkpointDir: string; ledgerPath: string; now: string }): Promise<LatestCheckpoint> {
    const ledger = await readLedger(input.ledgerPath);
    const tracker = await readTracker(input.checkpointDir);
    const present = new Set(await checkpointSteps(input.checkpointDir));
    const known = new Map(ledger.checkpoints.map((c) => [c.step, c]));
    // Hashed in this call: their ledger hash is their current hash (checkpoints can be many GB).
    const hashedNow = new Set<number>();
    for (const step of [...present].filter((s) => tracker !== undefined && s <= tracker && !known.has(s))) {
      const entry = { ...(await hashCheckpoint(input.checkpointDir, step, heartbeatPerFile(step))), firstSeenAt: input.now };
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
    for (const entry of [...ledger.checkpoints].reverse()) {
      if (!present.has(entry.step)) {
        untrusted.push({ step: entry.step, reason: `${entry.path} is gone` });
        continue;
      }
      if (latest) continue;
      const now = hashedNow.has(entry.step) ? entry : await hashCheckpoint(input.checkpointDir, entry.step, heartbeatPerFile(entry.step));
      if (now.sha256 !== entry.sha256) {
        untrusted.push({ step: entry.step, reason: `files of ${entry.path} changed since ${entry.firstSeenAt} (sha256 ${entry.sha256.slice(0, 12)} -> ${now.sha256.slice(0, 12)})` });
        continue;
      }
      latest = { step: entry.step, path: entry.path, sha256: entry.sha256 };
    }
    return { latest, checkpoints: ledger.checkpoints.map((c) => ({ step: c.step, sha256: c.sha256 })), untrusted: untrusted.reverse() };
  };
}
