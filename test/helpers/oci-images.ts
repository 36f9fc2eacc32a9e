import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { MEDIA_TYPES } from '../../src/registry/client.js';
import { RAY_VERSION_LABEL } from '../../src/registry/ray-version.js';

/** Test images pushed through the registry's own HTTP API (blob upload POST + PUT, manifest PUT). */
const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface PushTarget {
  baseUrl: string;
  repository: string;
  /** Authorization header value for pushing, when the registry wants one. */
  authorization?: string;
}

function headers(t: PushTarget, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, ...(t.authorization ? { authorization: t.authorization } : {}) };
}

async function pushBlob(t: PushTarget, bytes: Buffer): Promise<{ digest: string; size: number }> {
  const digest = sha256(bytes);
  const start = await fetch(`${t.baseUrl}/v2/${t.repository}/blobs/uploads/`, {
    method: 'POST',
    headers: headers(t),
  });
  if (start.status !== 202) throw new Error(`blob upload start: HTTP ${start.status} ${await start.text()}`);
  const location = new URL(start.headers.get('location') ?? '', t.baseUrl);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    body: bytes,
    headers: headers(t, { 'content-type': 'application/octet-stream' }),
  });
  if (put.status !== 201) throw new Error(`blob upload: HTTP ${put.status} ${await put.text()}`);
  return { digest, size: bytes.length };
}

async function pushManifest(
  t: PushTarget,
  mediaType: string,
  body: unknown,
  tag?: string,
): Promise<{ digest: string; size: number }> {
  const bytes = Buffer.from(JSON.stringify(body));
  const digest = sha256(bytes);
  const res = await fetch(`${t.baseUrl}/v2/${t.repository}/manifests/${tag ?? digest}`, {
    method: 'PUT',
    body: bytes,
    headers: headers(t, { 'content-type': mediaType }),
  });
  if (res.status !== 201) throw new Error(`manifest put: HTTP ${res.status} ${await res.text()}`);
  return { digest, size: bytes.length };
}

export interface ImageContent {
  labels?: Record<string, string>;
  env?: string[];
  architecture?: string;
  /** Docker schema 2 instead of OCI. */
  docker?: boolean;
}

/** A single-platform image: one (empty tar) layer, a config with the given labels and Env. */
export async function pushImage(t: PushTarget, content: ImageContent, tag?: string): Promise<string> {
  const tar = Buffer.alloc(1024); // an empty tar archive: two zero blocks
  const layer = gzipSync(tar);
  const config = Buffer.from(
    JSON.stringify({
      architecture: content.architecture ?? 'amd64',
      os: 'linux',
      config: { Labels: content.labels ?? null, Env: content.env ?? ['PATH=/usr/local/bin:/usr/bin:/bin'] },
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    }),
  );
  const layerDesc = await pushBlob(t, layer);
  const configDesc = await pushBlob(t, config);
  const mediaType = content.docker ? MEDIA_TYPES.dockerManifest : MEDIA_TYPES.ociManifest;
  const manifest = {
    schemaVersion: 2,
    mediaType,
    config: {
      mediaType: content.docker
        ? 'application/vnd.docker.container.image.v1+json'
        : 'application/vnd.oci.image.config.v1+json',
      ...configDesc,
    },
    layers: [
      {
        mediaType: content.docker
          ? 'application/vnd.docker.image.rootfs.diff.tar.gzip'
          : 'application/vnd.oci.image.layer.v1.tar+gzip',
        ...layerDesc,
      },
    ],
  };
  return (await pushManifest(t, mediaType, manifest, tag)).digest;
}

/** An OCI index over several single-platform images; returns the index and each platform's digest. */
export async function pushIndex(
  t: PushTarget,
  platforms: Record<string, ImageContent>,
  tag?: string,
): Promise<{ digest: string; platforms: Record<string, string> }> {
  const entries = [];
  const digests: Record<string, string> = {};
  for (const [architecture, content] of Object.entries(platforms)) {
    const digest = await pushImage(t, { ...content, architecture });
    const res = await fetch(`${t.baseUrl}/v2/${t.repository}/manifests/${digest}`, {
      method: 'HEAD',
      headers: headers(t, { accept: MEDIA_TYPES.ociManifest }),
    });
    entries.push({
      mediaType: MEDIA_TYPES.ociManifest,
      digest,
      size: Number(res.headers.get('content-length')),
      platform: { os: 'linux', architecture },
    });
    digests[architecture] = digest;
  }
  const index = await pushManifest(
    t,
    MEDIA_TYPES.ociIndex,
    { schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests: entries },
    tag,
  );
  return { digest: index.digest, platforms: digests };
}

/** `ragen/sokoban:2.60.0` labelled with Ray 2.60.0, pushed to a test registry: its pinned reference. */
export async function pushSokobanImage(registry: { baseUrl: string; host: string }): Promise<string> {
  const digest = await pushImage(
    { baseUrl: registry.baseUrl, repository: 'ragen/sokoban' },
    { labels: { [RAY_VERSION_LABEL]: '2.60.0' } },
    '2.60.0',
  );
  return `${registry.host}/ragen/sokoban:2.60.0@${digest}`;
}
