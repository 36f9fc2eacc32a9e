import { createHash } from 'node:crypto';
import { ErrorTypes } from '../domain/failures/error-types.js';
import { permanent } from '../errors/domain-error.js';
import { type BasicCredentials, basicCredentialsFor, basicHeader, parseChallenge } from './auth.js';
import { registryFailure, unreachable } from './errors.js';
import type { RegistryLocation } from './reference.js';

export const MEDIA_TYPES = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;
const ACCEPT = Object.values(MEDIA_TYPES).join(', ');
const INDEX_TYPES: ReadonlySet<string> = new Set([MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerList]);

/** The platform the product's clusters run on: an index resolves to this manifest. */
export const TARGET_PLATFORM = { os: 'linux', architecture: 'amd64' } as const;

export interface ImageConfig {
  labels: Record<string, string>;
  env: string[];
  /** The config's WorkingDir (absent when the image sets none). */
  workingDir?: string;
}

export interface InspectedImage {
  /** The digest asked for (index or manifest). */
  digest: string;
  mediaType: string;
  /** The linux/amd64 manifest's digest when `digest` named an index, else `digest`. */
  platformManifestDigest: string;
  configDigest: string;
  config: ImageConfig;
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  platform?: { os?: string; architecture?: string; variant?: string };
}

interface ManifestBody {
  mediaType?: string;
  manifests?: Descriptor[];
  config?: Descriptor;
}

export interface RegistryClientOptions {
  /** The Docker config file whose `auths` supply Basic credentials. */
  dockerConfigPath: string;
  /** Per request. */
  timeoutMs?: number;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/**
 * A small OCI Distribution client, read-only and by digest: anonymous first, then what the
 * registry's 401 challenge asks for (Basic from the Docker config, or a Bearer token from the
 * challenge's realm). Every manifest and blob is checked against its digest.
 */
export class RegistryClient {
  constructor(private readonly options: RegistryClientOptions) {}

  async inspect(loc: RegistryLocation): Promise<InspectedImage> {
    const session = new RegistrySession(loc, this.options);
    const top = await session.manifest(loc.digest);
    let manifest = top;
    let platformManifestDigest = loc.digest;
    if (INDEX_TYPES.has(top.mediaType)) {
      const entries = top.body.manifests ?? [];
      const chosen = entries.find(
        (d) =>
          d.platform?.os === TARGET_PLATFORM.os && d.platform.architecture === TARGET_PLATFORM.architecture,
      );
      if (!chosen) {
        const platforms =
          entries.map((d) => `${d.platform?.os ?? '?'}/${d.platform?.architecture ?? '?'}`).join(', ') ||
          'none';
        throw permanent(
          ErrorTypes.ImageNotVerified,
          `image ${loc.registry}/${loc.repository}@${loc.digest} is an index without a linux/amd64 manifest (platforms: ${platforms}); build and push a linux/amd64 image`,
        );
      }
      platformManifestDigest = chosen.digest;
      manifest = await session.manifest(chosen.digest);
    }
    const configDigest = manifest.body.config?.digest;
    if (!configDigest)
      throw permanent(
        ErrorTypes.ImageNotVerified,
        `manifest ${platformManifestDigest} in ${loc.registry}/${loc.repository} has no config descriptor (media type ${manifest.mediaType})`,
      );
    const blob = await session.blob(configDigest);
    const parsed = JSON.parse(blob.toString('utf8')) as {
      config?: { Labels?: Record<string, string> | null; Env?: string[] | null; WorkingDir?: string };
    };
    return {
      digest: loc.digest,
      mediaType: top.mediaType,
      platformManifestDigest,
      configDigest,
      config: {
        labels: parsed.config?.Labels ?? {},
        env: parsed.config?.Env ?? [],
        ...(parsed.config?.WorkingDir ? { workingDir: parsed.config.WorkingDir } : {}),
      },
    };
  }
}

/** One repository's requests, sharing the authorization that the first challenge earned. */
class RegistrySession {
  private authorization: string | undefined;
  private readonly tried: string[] = ['anonymous'];
  private basic: Promise<BasicCredentials | undefined> | undefined;

  constructor(
    private readonly loc: RegistryLocation,
    private readonly options: RegistryClientOptions,
  ) {}

  async manifest(digest: string): Promise<{ mediaType: string; body: ManifestBody }> {
    const url = `${this.loc.baseUrl}/v2/${this.loc.repository}/manifests/${digest}`;
    const res = await this.get(url, digest, { accept: ACCEPT });
    const bytes = Buffer.from(await res.arrayBuffer());
    const announced = res.headers.get('docker-content-digest');
    const actual = sha256(bytes);
    if ((announced !== null && announced !== digest) || actual !== digest) {
      throw permanent(
        ErrorTypes.ImageDigestMismatch,
        `registry ${this.loc.registry} returned a different manifest for ${this.loc.repository}@${digest}: Docker-Content-Digest ${announced ?? '(absent)'}, content sha256 ${actual}; do not run it — check the registry (or a proxy in front of it)`,
      );
    }
    const body = JSON.parse(bytes.toString('utf8')) as ManifestBody;
    const mediaType = body.mediaType ?? res.headers.get('content-type')?.split(';')[0] ?? '';
    return { mediaType, body };
  }

  async blob(digest: string): Promise<Buffer> {
    const url = `${this.loc.baseUrl}/v2/${this.loc.repository}/blobs/${digest}`;
    const bytes = Buffer.from(await (await this.get(url, digest, {})).arrayBuffer());
    if (sha256(bytes) !== digest) {
      throw permanent(
        ErrorTypes.ImageDigestMismatch,
        `registry ${this.loc.registry} returned blob content that does not hash to ${digest} (${this.loc.repository})`,
      );
    }
    return bytes;
  }

  private async get(url: string, digest: string, headers: Record<string, string>): Promise<Response> {
    let res = await this.send(url, headers);
    if (res.status === 401 && this.authorization === undefined) {
      this.authorization = await this.answerChallenge(res.headers.get('www-authenticate'), url, digest);
      if (this.authorization !== undefined) res = await this.send(url, headers);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw registryFailure(res.status, {
        registry: this.loc.registry,
        repository: this.loc.repository,
        digest,
        url,
        triedCredentials: this.tried,
      });
    }
    return res;
  }

  private async send(
    url: string,
    headers: Record<string, string>,
    authorization = this.authorization,
  ): Promise<Response> {
    try {
      return await fetch(url, {
        headers: { ...headers, ...(authorization ? { authorization } : {}) },
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw unreachable(this.loc.registry, url, err);
    }
  }

  private credentials(): Promise<BasicCredentials | undefined> {
    this.basic ??= basicCredentialsFor(this.loc.registry, this.options.dockerConfigPath);
    return this.basic;
  }

  /** The Authorization value the 401 challenge asks for; undefined when there is nothing to offer. */
  private async answerChallenge(
    header: string | null,
    url: string,
    digest: string,
  ): Promise<string | undefined> {
    const challenge = parseChallenge(header);
    const basic = await this.credentials();
    if (challenge?.scheme === 'bearer' && challenge.params['realm']) {
      return this.bearerToken(challenge.params, basic, url, digest);
    }
    if (challenge?.scheme === 'basic' && basic) {
      this.tried.push(basic.source);
      return basicHeader(basic);
    }
    if (!basic)
      this.tried[0] = `anonymous (no entry for ${this.loc.registry} in ${this.options.dockerConfigPath})`;
    return undefined;
  }

  private async bearerToken(
    params: Record<string, string>,
    basic: BasicCredentials | undefined,
    url: string,
    digest: string,
  ): Promise<string> {
    const realm = new URL(params['realm'] ?? '');
    if (params['service']) realm.searchParams.set('service', params['service']);
    realm.searchParams.set('scope', params['scope'] ?? `repository:${this.loc.repository}:pull`);
    this.tried.push(
      `bearer token from ${realm.origin}${realm.pathname} (${basic ? basic.source : 'anonymous'})`,
    );
    let res: Response;
    try {
      res = await fetch(realm, {
        headers: basic ? { authorization: basicHeader(basic) } : {},
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw unreachable(this.loc.registry, `${realm.origin}${realm.pathname}`, err);
    }
    if (!res.ok) {
      await res.body?.cancel();
      // A 404 here is the token endpoint's, not the image's.
      const status = res.status === 404 ? 401 : res.status;
      throw registryFailure(status, {
        registry: this.loc.registry,
        repository: this.loc.repository,
        digest,
        url: `${realm.origin}${realm.pathname}`,
        triedCredentials: this.tried,
      });
    }
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token)
      throw permanent(
        ErrorTypes.RegistryUnauthorized,
        `the token endpoint ${realm.origin}${realm.pathname} for ${this.loc.registry} returned no token`,
      );
    return `Bearer ${token}`;
  }
}
