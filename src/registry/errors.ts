import { type DomainError, permanent, transient } from '../errors/domain-error.js';
import { ErrorTypes, TransientErrorTypes } from '../domain/failures/error-types.js';
import { verdictOfStatus } from '../errors/external-failures.js';

/**
 * Registry 5xx, timeouts and refused connections: a transient failure, so the activity's retry
 * policy tries again; the last attempt's message is the workflow's failure.
 */
export const REGISTRY_UNAVAILABLE = TransientErrorTypes.RegistryUnavailable;

export function registryUnavailable(message: string): DomainError {
  return transient(REGISTRY_UNAVAILABLE, message);
}

/** One place maps a registry's answer onto the orchestrator's failures. */
export function registryFailure(
  status: number,
  what: { registry: string; repository: string; digest: string; url: string; triedCredentials: string[] },
): DomainError {
  const image = `${what.registry}/${what.repository}@${what.digest}`;
  if (status === 404) {
    return permanent(
      ErrorTypes.ImageNotFound,
      `image not found: repository ${what.registry}/${what.repository} has no manifest ${what.digest} (check the repository and push the image, or correct the digest)`,
    );
  }
  if (status === 401 || status === 403) {
    return permanent(
      ErrorTypes.RegistryUnauthorized,
      `registry ${what.registry} refused access to ${image} (HTTP ${status}); credentials tried: ${what.triedCredentials.join(', then ')}; add credentials for ${what.registry} to the Docker config's auths (docker login ${what.registry})`,
    );
  }
  if (verdictOfStatus(status) === 'transient') {
    return registryUnavailable(
      `registry ${what.registry} answered HTTP ${status} for ${what.url}; retried by the activity's retry policy`,
    );
  }
  return permanent(
    ErrorTypes.ImageNotVerified,
    `registry ${what.registry} answered HTTP ${status} for ${what.url}`,
  );
}

/** fetch() threw: the registry could not be reached at all (refused, DNS, timeout). */
export function unreachable(registry: string, url: string, err: unknown): DomainError {
  const cause =
    err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
  return registryUnavailable(
    `registry ${registry} unreachable at ${url}: ${cause}; retried by the activity's retry policy`,
  );
}
