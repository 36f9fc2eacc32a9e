import { z } from 'zod';

/** `s3://bucket/prefix`: a bucket name as S3 allows it, then an optional key prefix. */
const S3_URL = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/;

/**
 * `storage.objectStore`: where archives and the retained checkpoints are copied, so they outlive
 * the cluster's volume and a campaign can continue on another cluster. Credentials are never here:
 * the worker's environment (the AWS SDK's default chain: AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, AWS_PROFILE, a web identity) supplies them.
 */
export const ObjectStoreSchema = z.strictObject({
  url: z
    .string()
    .regex(S3_URL, 'must be s3://<bucket>/<prefix> (a lowercase bucket name, then an optional key prefix)')
    .refine((u) => !u.includes('//', 5), { message: 'the key prefix may not contain empty parts (//)' }),
  /** An S3-compatible server (MinIO, SeaweedFS, Ceph, R2...); absent: AWS S3 of `region`. */
  endpoint: z
    .string()
    .url('must be an http(s) URL such as https://s3.example.com:9000')
    .refine((u) => /^https?:\/\//.test(u), { message: 'must start with http:// or https://' })
    .optional(),
  region: z.string().min(1).default('us-east-1'),
});
export type ObjectStore = z.infer<typeof ObjectStoreSchema>;

/** The bucket and the key prefix (no leading or trailing slash; '' when the URL has none). */
export function parseObjectStoreUrl(url: string): { bucket: string; prefix: string } {
  const m = S3_URL.exec(url);
  if (!m) throw new Error(`not an s3:// URL: ${url}`);
  return { bucket: m[1] as string, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/** The object key of `relative` (a path with /) under the store's prefix. */
export function objectKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts]
    .join('/')
    .replace(/\/{2,}/g, '/')
    .replace(/^\//, '');
}
