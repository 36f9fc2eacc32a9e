import { ErrorTypes } from '../spec/error-types.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { parseImageRef } from '../spec/image.js';
import { backendOf } from './backend-of.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';

export interface VerifyResult {
  image: { ref?: string; digest?: string; verified: boolean; note: string };
  plannedRayVersion?: string;
}

/**
 * Stage 2, before any GPU is spent: the Ray version the backend will run must equal rayVersion.
 * The image's digest is recorded; reading it from its registry is not done yet (see README).
 * The head's own version is checked again after join (the authoritative check).
 */
export function createVerify(deps: ActivityDeps) {
  return async function verify(input: { spec: ExperimentSpec }): Promise<VerifyResult> {
    const { spec } = input;
    const planned = await backendOf(deps, spec.backend).plannedRayVersion(spec);
    if (planned !== undefined && planned !== spec.rayVersion) {
      throw permanent(
        ErrorTypes.RayVersionMismatch,
        `Ray version mismatch: the spec declares rayVersion ${spec.rayVersion}, but the ${spec.backend} backend runs Ray ${planned}; set rayVersion: ${planned} or install Ray ${spec.rayVersion} (requirements.txt)`,
      );
    }
    const image = spec.image
      ? { ref: spec.image, digest: parseImageRef(spec.image).digest, verified: false, note: 'digest recorded; registry lookup not performed by this version' }
      : { verified: false, note: 'no image: the local backend runs the project venv' };
    return { image, plannedRayVersion: planned };
  };
}
