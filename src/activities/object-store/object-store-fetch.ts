import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { LedgerEntry } from '../../domain/campaign/campaign.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { objectKey } from '../../domain/object-store/object-store.js';
import { checkpointPath } from '../../domain/spec/paths.js';
import type { ObjectStoreIndex } from './object-store-index.js';
import { recordSha256 } from '../checkpoints/checkpoints.js';
import { permanent } from '../common/failures.js';
import { beat } from '../common/heartbeat-loop.js';
import { objectStoreError, openStore } from './object-store-client.js';

/** A checkpoint being fetched lands here first: never a `global_step_N` a resume could pick half done. */
const FETCHING_PREFIX = '.fetching-global_step_';

/**
 * Fetch a checkpoint the ledger holds but the volume does not, from where the archive copied it
 * (object-store.json), into `<checkpointDir>/global_step_N`. Every file is hashed as it streams in
 * and compared with the ledger's sha256 (and the record's hash over all files), before the folder
 * is renamed into place: a resume never sees unverified bytes. Returns the entry's files with the
 * new files' modification times (the ledger's check of later attempts reads them). Heartbeats
 * {step, file} per file; a retry starts the folder again.
 */
export async function fetchCheckpoint(
  index: ObjectStoreIndex,
  entry: LedgerEntry,
  checkpointDir: string,
): Promise<LedgerEntry['files']> {
  const stored = index.checkpoints.find((c) => c.step === entry.step);
  if (!stored || stored.sha256 !== entry.sha256)
    throw new Error(`step ${entry.step} is not in the object store's index with the ledger's sha256`);
  const store = openStore(index.store);
  const tmp = join(checkpointDir, `${FETCHING_PREFIX}${entry.step}`);
  await rm(tmp, { recursive: true, force: true });
  const files: LedgerEntry['files'] = [];
  try {
    for (const f of entry.files) {
      beat({ step: entry.step, file: f.path });
      const key = objectKey(stored.keyPrefix, f.path);
      const target = join(tmp, f.path);
      await mkdir(dirname(target), { recursive: true });
      const got = await store.client
        .send(new GetObjectCommand({ Bucket: store.bucket, Key: key }))
        .catch((err: unknown) => {
          throw objectStoreError(err, store, `fetching s3://${store.bucket}/${key}`);
        });
      const hash = createHash('sha256');
      const body = got.Body as Readable;
      body.on('data', (chunk: Buffer) => hash.update(chunk));
      await pipeline(body, createWriteStream(target));
      const sha256 = hash.digest('hex');
      const { size, mtimeMs } = await stat(target);
      if (sha256 !== f.sha256 || size !== f.bytes)
        throw permanent(
          ErrorTypes.ObjectStoreChecksumMismatch,
          `s3://${store.bucket}/${key} has sha256 ${sha256} (${size} bytes), the ledger recorded ${f.sha256} (${f.bytes} bytes): not resumed from`,
        );
      files.push({ ...f, mtimeMs });
    }
    if (recordSha256(files) !== entry.sha256)
      throw permanent(
        ErrorTypes.ObjectStoreChecksumMismatch,
        `the fetched files of step ${entry.step} hash to ${recordSha256(files)}, the ledger recorded ${entry.sha256}`,
      );
    await rename(tmp, checkpointPath(checkpointDir, entry.step));
    return files;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  } finally {
    store.client.destroy();
  }
}
