import type { OrchestratorConfig } from '../config/config.js';
import type { ComputeBackend } from './backend.js';
import type { BackendLogger } from './logger.js';
import type { RetryOptions } from '../errors/retry-transient.js';
import { LazyKubeRayBackend } from './kuberay/lazy-backend.js';
import { LocalBackend, type LocalBackendConfig } from './local/local-backend.js';

/** The backends a worker serves: local always; kuberay when a Kubernetes cluster is configured. */
export function createBackends(
  config: OrchestratorConfig,
  logger?: BackendLogger,
  retry?: Partial<RetryOptions>,
): Partial<Record<'local' | 'kuberay', ComputeBackend>> {
  return {
    local: new LocalBackend(localBackendConfig(config, logger)),
    ...(config.kuberayEnabled
      ? {
          kuberay: new LazyKubeRayBackend({
            namespace: config.RAGEN_KUBERAY_NAMESPACE,
            kubeconfig: config.RAGEN_KUBECONFIG,
            dashboard: config.RAGEN_KUBERAY_DASHBOARD,
            // The image's `python`; a spec names another with trainer.interpreter.
            python: 'python',
            logger,
            retry,
            labelSuspectNodes: config.RAGEN_LABEL_SUSPECT_NODES === '1',
          }),
        }
      : {}),
  };
}

/** The local backend's settings from the worker's configuration. */
export function localBackendConfig(config: OrchestratorConfig, logger?: BackendLogger): LocalBackendConfig {
  return {
    runRoot: config.RAGEN_RUN_ROOT,
    rayBin: config.rayBin,
    python: config.python,
    nodeIp: config.RAGEN_NODE_IP,
    logger,
  };
}
