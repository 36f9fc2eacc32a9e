import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { type ImageVerification, parseImageRef } from '../../domain/spec/image.js';
import { dockerConfigPath } from '../../registry/auth.js';
import { RegistryClient } from '../../registry/client.js';
import { imageCode } from '../../registry/code-labels.js';
import { RAY_VERSION_LABEL, imageRayVersion } from '../../registry/ray-version.js';
import { locateImage } from '../../registry/reference.js';
import { backendOf } from '../common/backend-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';

export interface VerifyResult {
  image: ImageVerification;
  plannedRayVersion?: string;
}

/**
 * Stage 2, before any GPU is spent. The Ray version the backend will run must equal rayVersion;
 * the image's digest must exist in its registry (an index resolves to linux/amd64) and the Ray
 * version the image states (label io.ray.version, else RAY_VERSION in its Env) must equal
 * rayVersion. An image that states none is recorded as such; the head's own version is checked
 * after join either way (the authoritative check). Read-only, so retries are safe: registry 5xx
 * and unreachable registries throw retryable errors; everything else is permanent.
 */
export function createVerify(deps: ActivityDeps) {
  const registry = deps.imageRegistry ?? new RegistryClient({ dockerConfigPath: dockerConfigPath() });
  return async function verify(input: { spec: ExperimentSpec }): Promise<VerifyResult> {
    const { spec } = input;
    const planned = await backendOf(deps, spec.backend).plannedRayVersion(spec);
    if (planned !== undefined && planned !== spec.rayVersion) {
      throw permanent(
        ErrorTypes.RayVersionMismatch,
        `Ray version mismatch: the spec declares rayVersion ${spec.rayVersion}, but the ${spec.backend} backend runs Ray ${planned}; set rayVersion: ${planned} or install Ray ${spec.rayVersion} (requirements.txt)`,
      );
    }
    if (!spec.image)
      return {
        image: { verified: false, note: 'no image: the local backend runs the project venv' },
        plannedRayVersion: planned,
      };
    const loc = locateImage(parseImageRef(spec.image));
    const found = await registry.inspect(loc);
    const stated = imageRayVersion(found.config);
    if (stated.version !== undefined && stated.version !== spec.rayVersion) {
      const where = stated.source === 'label' ? `label ${RAY_VERSION_LABEL}` : 'RAY_VERSION in its Env';
      throw permanent(
        ErrorTypes.RayVersionMismatch,
        `Ray version mismatch: image ${spec.image} contains Ray ${stated.version} (${where}), the spec declares rayVersion ${spec.rayVersion}; set rayVersion: ${stated.version}, or use an image built with Ray ${spec.rayVersion}`,
      );
    }
    const note =
      stated.version === undefined
        ? `digest found in ${loc.registry}/${loc.repository}; the image states no Ray version (no ${RAY_VERSION_LABEL} label, no RAY_VERSION in Env), so the Ray version observed on the head after join is the check`
        : `digest found in ${loc.registry}/${loc.repository}; Ray ${stated.version} (${stated.source}) equals rayVersion`;
    return {
      image: {
        ref: spec.image,
        digest: loc.digest,
        platformManifestDigest: found.platformManifestDigest,
        rayVersion: stated.version,
        rayVersionSource: stated.source,
        code: imageCode(found.config),
        verified: true,
        note:
          spec.backend === 'local' ? `${note}; the local backend runs the project venv, not the image` : note,
      },
      plannedRayVersion: planned,
    };
  };
}
