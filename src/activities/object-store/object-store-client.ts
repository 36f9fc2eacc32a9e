import { S3Client } from '@aws-sdk/client-s3';
import type { BuildMiddleware, MetadataBearer } from '@smithy/types';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { type ObjectStore, parseObjectStoreUrl } from '../../domain/object-store/object-store.js';
import { DomainError } from '../../errors/domain-error.js';

/** A client for `storage.objectStore` and where its objects go. */
export interface Store {
  client: S3Client;
  bucket: string;
  prefix: string;
  settings: ObjectStore;
}

/**
 * The S3 client of `storage.objectStore`. Credentials come only from the SDK's default chain (the
 * worker's environment: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, a web identity), so
 * they never pass through a spec, a manifest or a workflow history. A custom endpoint is addressed
 * path-style (what S3-compatible servers expect). Checksums are the ones this code sends (SHA256),
 * never an extra CRC the SDK would add on its own.
 */
export function openStore(settings: ObjectStore): Store {
  const { bucket, prefix } = parseObjectStoreUrl(settings.url);
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // An unreachable endpoint fails in seconds, not after the OS's connect timeout.
    requestHandler: { connectionTimeout: 5000 },
    maxAttempts: 3,
  });
  client.middlewareStack.add(payloadHashFromChecksum, { step: 'build', name: 'payloadHashFromChecksum' });
  return { client, bucket, prefix, settings };
}

/**
 * SigV4 signs an http request's payload with its SHA256 (x-amz-content-sha256); a part or object
 * sent with ChecksumSHA256 has that hash already (the same bytes' SHA256), so the signer reuses it
 * instead of hashing every byte once more on the event loop. The store still checks both.
 */
const payloadHashFromChecksum: BuildMiddleware<object, MetadataBearer> = (next) => (args) => {
  const checksum = (args.input as { ChecksumSHA256?: unknown }).ChecksumSHA256;
  const request = args.request as { headers?: Record<string, string> };
  if (typeof checksum === 'string' && request.headers)
    request.headers['x-amz-content-sha256'] = Buffer.from(checksum, 'base64').toString('hex');
  return next(args);
};

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
]);
const CREDENTIAL_CODES = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'CredentialsProviderError',
]);
const QUOTA_CODES = new Set(['QuotaExceeded', 'EntityTooLarge', 'XMinioStorageFull', 'InsufficientStorage']);

interface AwsErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  $metadata?: { httpStatusCode?: number };
}

function networkCode(err: unknown): string | undefined {
  for (
    let e = err as AwsErrorShape | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as AwsErrorShape, depth++
  ) {
    if (e.code && NETWORK_CODES.has(e.code)) return e.code;
    if (e.name === 'TimeoutError') return 'a connection timeout';
  }
  const aggregated = (err as { errors?: unknown[] }).errors;
  return aggregated?.map(networkCode).find((c) => c !== undefined);
}

/**
 * One error for what S3 (or the network) answered, naming the setting and its fix. Permanent except
 * for an unreachable endpoint outside preflight (a server restarting comes back: the activity's
 * retry policy tries again); in preflight nothing has been created yet and the user fixes the input.
 */
export function objectStoreError(
  err: unknown,
  store: Store,
  doing: string,
  inPreflight = false,
): DomainError {
  const { url, endpoint, region } = store.settings;
  const where = endpoint ?? `AWS S3 (${region})`;
  const e = err as AwsErrorShape;
  const code = e.name ?? e.Code ?? '';
  const status = e.$metadata?.httpStatusCode;
  const fail = (message: string, permanent = true) =>
    new DomainError({ type: ErrorTypes.ObjectStoreUnusable, message, permanent, cause: err });
  const net = networkCode(err);
  if (net)
    return fail(
      `storage.objectStore.endpoint ${where} is unreachable while ${doing} (${net}): start the S3 server or correct storage.objectStore.endpoint`,
      inPreflight,
    );
  if (
    code === 'NoSuchBucket' ||
    (status === 404 && code === 'NotFound' && doing.startsWith('checking the bucket'))
  )
    return fail(
      `storage.objectStore.url ${url}: bucket ${store.bucket} does not exist at ${where}: create it (aws s3 mb s3://${store.bucket}) or correct storage.objectStore.url`,
    );
  if (code === 'AccessDenied' || (status === 403 && !CREDENTIAL_CODES.has(code)))
    return fail(
      `storage.objectStore ${url} at ${where} denied ${doing} (${code || status}): the worker's key may not write s3://${store.bucket}, or the bucket is read-only or over its quota; grant the key s3:PutObject/GetObject/DeleteObject there, or raise the bucket's quota`,
    );
  if (CREDENTIAL_CODES.has(code) || e.name === 'CredentialsProviderError')
    return fail(
      `storage.objectStore ${url} at ${where} refused the worker's credentials while ${doing} (${code || status}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the worker's environment to a key that may read and write s3://${store.bucket}`,
    );
  if (QUOTA_CODES.has(code) || status === 507)
    return fail(
      `storage.objectStore ${url} at ${where} is full (${code || status}) while ${doing}: raise the bucket's quota, free space in it, or point storage.objectStore.url at another bucket`,
    );
  return fail(
    `storage.objectStore ${url} at ${where} failed while ${doing}: ${code || status || ''} ${e.message ?? String(err)}`.trim(),
    status === undefined || status >= 500 ? inPreflight : true,
  );
}
