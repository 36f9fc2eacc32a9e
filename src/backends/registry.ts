import type { OrchestratorConfig } from '../config.js';
import type { ComputeBackend } from './backend.js';
import { LocalBackend } from './local/local-backend.js';

/** The backends a worker serves. The kuberay backend is not part of this build yet. */
export function createBackends(config: OrchestratorConfig): Partial<Record<'local' | 'kuberay', ComputeBackend>> {
  return {
    local: new LocalBackend({ runRoot: config.RAGEN_RUN_ROOT, rayBin: config.rayBin, python: config.python, nodeIp: config.RAGEN_NODE_IP }),
  };
}
