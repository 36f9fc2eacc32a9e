import { GetObjectCommand } from '@aws-sdk/client-s3';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { type ObjectStore, objectKey } from '../../domain/object-store/object-store.js';
import { objectStoreError, openStore } from './object-store-client.js';
import { objectStoreIndexPath } from './object-store-index.js';

/** Where a campaign's ledger was copied from: its store and the archive dir its keys are under. */
export interface LedgerSource {
  objectStore: ObjectStore;
  archiveDir: string;
}

const missing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

/**
 * A campaign moved to a fresh archive dir (another cluster's volume) has no ledger there: the
 * archive copied it and its object-store index to the store (archive-upload.ts, under
 * `<prefix>/archive/<path in archiveDir>`), so they are fetched back before the ledger is read.
 * The index is written first and the ledger last: a ledger on disk means both are there. Nothing
 * happens when the ledger exists, or when the store holds none (a campaign's first attempt).
 * The ledger is still validated by readLedger; the checkpoints it names are verified when fetched.
 */
export async function restoreLedgerFromStore(ledgerPath: string, from?: LedgerSource): Promise<boolean> {
  if (!from || existsSync(ledgerPath)) return false;
  const store = openStore(from.objectStore);
  try {
    const fetched: { path: string; text: string }[] = [];
    for (const path of [objectStoreIndexPath(ledgerPath), ledgerPath]) {
      const key = objectKey(store.prefix, 'archive', relative(from.archiveDir, path));
      try {
        const answer = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
        fetched.push({ path, text: (await answer.Body?.transformToString()) ?? '' });
      } catch (err) {
        if (missing(err)) continue;
        throw objectStoreError(err, store, `fetching the campaign's ledger ${key}`);
      }
    }
    if (!fetched.some((f) => f.path === ledgerPath)) return false;
    for (const { path, text } of fetched) {
      await mkdir(dirname(path), { recursive: true });
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, text);
      await rename(tmp, path);
    }
    return true;
  } finally {
    store.client.destroy();
  }
}
