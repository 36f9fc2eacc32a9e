import type { ImageRef } from '../domain/spec/image.js';

/** Where an image lives: the registry's base URL, the repository path there, the digest asked for. */
export interface RegistryLocation {
  /** host[:port] as written in the reference (docker.io for Docker Hub). */
  registry: string;
  /** scheme://host[:port] the client talks to. */
  baseUrl: string;
  repository: string;
  digest: string;
  tag?: string;
}

/** Names of Docker Hub in references; its API lives at registry-1.docker.io. */
const DOCKER_HUB_HOSTS: ReadonlySet<string> = new Set([
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
]);

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/;

/** Loopback registries are spoken to over plain http; every other registry over https. */
export function isLoopbackRegistry(host: string): boolean {
  return LOOPBACK.test(host);
}

/**
 * The usual reference rules: the first path component names the registry when it contains a dot
 * or a port or is `localhost`; otherwise the image is on Docker Hub, and a one-component name gets
 * `library/`.
 */
export function locateImage(ref: ImageRef): RegistryLocation {
  const slash = ref.repository.indexOf('/');
  const first = slash === -1 ? '' : ref.repository.slice(0, slash);
  const explicit = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (explicit && !DOCKER_HUB_HOSTS.has(first)) {
    const scheme = isLoopbackRegistry(first) ? 'http' : 'https';
    return {
      registry: first,
      baseUrl: `${scheme}://${first}`,
      repository: ref.repository.slice(slash + 1),
      digest: ref.digest,
      tag: ref.tag,
    };
  }
  const path = explicit ? ref.repository.slice(slash + 1) : ref.repository;
  const repository = path.includes('/') ? path : `library/${path}`;
  return {
    registry: 'docker.io',
    baseUrl: 'https://registry-1.docker.io',
    repository,
    digest: ref.digest,
    tag: ref.tag,
  };
}
