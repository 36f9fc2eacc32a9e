import { join, relative } from 'node:path';
import type { CheckpointRecord } from '../domain/results.js';
import { type ObjectStore, objectKey } from '../domain/object-store.js';
import { metricsSeriesPath } from '../domain/paths.js';
import { type Retain, retentionPlan } from '../domain/retention.js';
import { filesUnder, sha256File } from './checkpoints.js';
import { metricValues } from './checkpoint-retention.js';
import { beat, heartbeatWhile } from './heartbeat-loop.js';
import { openStore, type Store } from './object-store-client.js';
import { type ObjectStoreIndex, recordIndex } from './object-store-index.js';
import { type UploadProgress, uploadFile } from './object-store-upload.js';

/** The checkpoint folder's key prefix: `<prefix>/checkpoints/<path under storage.checkpointDir>`. */
export function checkpointKeyPrefix(store: Store, checkpointRoot: string, checkpointPath: string): string {
  return objectKey(store.prefix, 'checkpoints', relative(checkpointRoot, checkpointPath));
}

/** The checkpoints `storage.retain` keeps (all without it; the newest always): the ones worth copying. */
async function retained(checkpoints: CheckpointRecord[], retain: Retain | undefined, runDir: string) {
  if (!retain || checkpoints.length === 0) return checkpoints;
  const newest = Math.max(...checkpoints.map((c) => c.step));
  const values = retain.best ? await metricValues([metricsSeriesPath(runDir)], retain.best.metric) : {};
  const plan = retentionPlan(checkpoints, retain, [{ step: newest, why: 'the newest' }], values);
  const keep = new Set(plan.keep.map((k) => k.step));
  return checkpoints.filter((c) => keep.has(c.step));
}

export interface ArchiveUploadInput {
  objectStore: ObjectStore;
  storage: { checkpointDir: string; archiveDir: string; retain?: Retain };
  /** The run's archive folder: every file in it (manifest, metrics, validation, report, logs). */
  runDir: string;
  /** The ledger's checkpoints (with their files' sha256). */
  checkpoints: CheckpointRecord[];
  /** The ledger whose folder gets object-store.json. */
  ledgerPath: string;
}

export interface ArchiveUploadResult {
  uploaded: number;
  present: number;
  checkpointSteps: number[];
}

/**
 * Copy a run's archive folder and its retained checkpoints to the object store, file by file
 * (uploadFile: multipart, SHA256-checked, skipped when present with the same sha256). Heartbeats
 * the current multipart upload's parts (UploadProgress); a retry resumes from them. Checkpoints
 * first: the manifest, uploaded last, then names only what is already there.
 */
export async function uploadArchive(
  input: ArchiveUploadInput,
  resume?: UploadProgress,
): Promise<ArchiveUploadResult> {
  const store = openStore(input.objectStore);
  const counts = { uploaded: 0, present: 0 };
  const onProgress = (p: UploadProgress) => {
    try {
      beat(p);
    } catch {
      // outside an activity (the bench): nothing to heartbeat
    }
  };
  const send = async (key: string, file: string, sha256: string) => {
    const outcome = await heartbeatWhile(uploadFile(store, { key, file, sha256 }, { resume, onProgress }));
    counts[outcome]++;
  };
  const kept = await retained(input.checkpoints, input.storage.retain, input.runDir);
  const indexed: ObjectStoreIndex['checkpoints'] = [];
  for (const c of kept) {
    const keyPrefix = checkpointKeyPrefix(store, input.storage.checkpointDir, c.path);
    for (const f of c.files) await send(objectKey(keyPrefix, f.path), join(c.path, f.path), f.sha256);
    indexed.push({ step: c.step, sha256: c.sha256, keyPrefix });
  }
  if (kept.length > 0) await recordIndex(input.ledgerPath, input.objectStore, indexed);
  const archiveFiles = (await filesUnder(input.runDir).catch(() => [] as string[])).sort();
  for (const file of archiveFiles) {
    const key = objectKey(store.prefix, 'archive', relative(input.storage.archiveDir, file));
    await send(key, file, await sha256File(file));
  }
  store.client.destroy();
  return { ...counts, checkpointSteps: kept.map((c) => c.step) };
}
