import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CheckpointRecord } from '../../domain/run/results.js';
import { type ObjectStore, objectKey } from '../../domain/object-store/object-store.js';
import { metricsSeriesPath } from '../../domain/spec/paths.js';
import { type Retain, retentionPlan } from '../../domain/checkpoints/retention.js';
import { filesUnder, sha256File } from '../checkpoints/checkpoints.js';
import { metricValues } from '../checkpoints/checkpoint-retention.js';
import { beat, heartbeatWhile } from '../common/heartbeat-loop.js';
import { openStore, type Store } from '../object-store/object-store-client.js';
import {
  type ObjectStoreIndex,
  objectStoreIndexPath,
  recordIndex,
} from '../object-store/object-store-index.js';
import { type UploadProgress, uploadFile } from '../object-store/object-store-upload.js';

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

/** Heartbeat details of the archive's upload: every multipart upload open at the time. */
export interface ArchiveUploadHeartbeat {
  uploads: UploadProgress[];
}

/** Files uploaded at once (each with its own parts in flight): small files are latency-bound. */
export const FILES_AT_ONCE = 4;

/** At most `size` tasks at once; `add` waits for a free slot; the first failure is thrown by drain. */
class FilePool {
  private readonly running = new Set<Promise<void>>();
  private failure: unknown;
  constructor(private readonly size: number) {}

  async add(task: () => Promise<void>): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const p: Promise<void> = task()
      .catch((err: unknown) => {
        this.failure ??= err;
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
    if (this.running.size >= this.size) await Promise.race(this.running);
  }

  async drain(): Promise<void> {
    await Promise.all(this.running);
    if (this.failure !== undefined) throw this.failure;
  }
}

export interface ArchiveUploadResult {
  uploaded: number;
  present: number;
  checkpointSteps: number[];
}

/**
 * Copy a run's archive folder and its retained checkpoints to the object store, FILES_AT_ONCE
 * files at a time (uploadFile: multipart, SHA256-checked, skipped when present with the same
 * sha256). Heartbeats the open multipart uploads' parts ({uploads}); a retry resumes each from
 * them. Checkpoints first: the archive folder (the manifest among it) follows once they are there.
 */
export async function uploadArchive(
  input: ArchiveUploadInput,
  resume?: ArchiveUploadHeartbeat,
): Promise<ArchiveUploadResult> {
  const store = openStore(input.objectStore);
  const counts = { uploaded: 0, present: 0 };
  // The open multipart uploads, heartbeated together: a retry resumes each from its parts.
  const open = new Map<string, UploadProgress>();
  const onProgress = (p: UploadProgress) => {
    open.set(p.key, p);
    try {
      beat({ uploads: [...open.values()] } satisfies ArchiveUploadHeartbeat);
    } catch {
      // outside an activity (the bench): nothing to heartbeat
    }
  };
  const earlier = new Map((resume?.uploads ?? []).map((u) => [u.key, u]));
  const pool = new FilePool(FILES_AT_ONCE);
  const send = (key: string, file: string, sha256: string) =>
    pool.add(async () => {
      const outcome = await heartbeatWhile(
        uploadFile(store, { key, file, sha256 }, { resume: earlier.get(key), onProgress }),
      );
      open.delete(key);
      counts[outcome]++;
    });
  const kept = await retained(input.checkpoints, input.storage.retain, input.runDir);
  const indexed: ObjectStoreIndex['checkpoints'] = [];
  for (const c of kept) {
    const keyPrefix = checkpointKeyPrefix(store, input.storage.checkpointDir, c.path);
    for (const f of c.files) await send(objectKey(keyPrefix, f.path), join(c.path, f.path), f.sha256);
    indexed.push({ step: c.step, sha256: c.sha256, keyPrefix });
  }
  // The index names only checkpoints whose every file is in the store.
  await pool.drain();
  if (kept.length > 0) await recordIndex(input.ledgerPath, input.objectStore, indexed);
  // A campaign's ledger and index live in the campaign's folder, outside the attempt's: copied too.
  const ledgerFiles = [input.ledgerPath, objectStoreIndexPath(input.ledgerPath)].filter(
    (f) => !f.startsWith(`${input.runDir}/`) && existsSync(f),
  );
  const archiveFiles = [
    ...(await filesUnder(input.runDir).catch(() => [] as string[])),
    ...ledgerFiles,
  ].sort();
  for (const file of archiveFiles) {
    const key = objectKey(store.prefix, 'archive', relative(input.storage.archiveDir, file));
    await send(key, file, await sha256File(file));
  }
  await pool.drain();
  store.client.destroy();
  return { ...counts, checkpointSteps: kept.map((c) => c.step) };
}
