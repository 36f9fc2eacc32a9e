import type { ComputeBackend } from '../../backends/backend.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';

export function backendOf(deps: ActivityDeps, kind: 'local' | 'kuberay'): ComputeBackend {
  const backend = deps.backends[kind];
  if (!backend)
    throw permanent(
      ErrorTypes.InvalidSpec,
      `backend '${kind}' is not configured on this worker; start the worker with it or use backend: local`,
    );
  return backend;
}
