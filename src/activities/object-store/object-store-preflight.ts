import { createHash, randomUUID } from 'node:crypto';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { permanent } from '../common/failures.js';
import type { PreflightCheck } from '../../backends/backend.js';
import { type ObjectStore, objectKey } from '../../domain/object-store/object-store.js';
import { objectStoreError, openStore } from './object-store-client.js';

/**
 * Preflight for storage.objectStore: write a small object under the prefix (with its SHA256, as the
 * archive's uploads are) and delete it, before any cluster exists. Throws ObjectStoreUnusable naming
 * the setting and the fix (endpoint unreachable, bucket missing, credentials refused, quota full).
 */
export async function objectStoreWritable(settings: ObjectStore): Promise<PreflightCheck> {
  const store = openStore(settings);
  const key = objectKey(store.prefix, `.preflight-${randomUUID()}`);
  const body = Buffer.from('ragen-orchestrator preflight\n');
  try {
    await store.client
      .send(
        new PutObjectCommand({
          Bucket: store.bucket,
          Key: key,
          Body: body,
          ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
        }),
      )
      .catch(async (err: unknown) => {
        if ((err as { name?: string }).name === 'AccessDenied' && (await canList(store)))
          throw permanent(
            ErrorTypes.ObjectStoreUnusable,
            `storage.objectStore ${settings.url}: the worker's key can list bucket ${store.bucket} but may not write to it (AccessDenied): the bucket is full (over its quota) or read-only; raise the bucket's quota or free space in it, grant the key s3:PutObject, or point storage.objectStore.url at another bucket`,
          );
        throw objectStoreError(err, store, `writing a probe object to s3://${store.bucket}/${key}`, true);
      });
    await store.client
      .send(new DeleteObjectCommand({ Bucket: store.bucket, Key: key }))
      .catch((err: unknown) => {
        throw objectStoreError(err, store, `deleting the probe object s3://${store.bucket}/${key}`, true);
      });
  } finally {
    store.client.destroy();
  }
  return { name: `object-store:${settings.url}`, ok: true, detail: 'wrote and deleted a probe object' };
}

/** Whether the key can read the bucket: a refused write is then the bucket's state, not the key. */
async function canList(store: ReturnType<typeof openStore>): Promise<boolean> {
  return store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, MaxKeys: 1 })).then(
    () => true,
    () => false,
  );
}
