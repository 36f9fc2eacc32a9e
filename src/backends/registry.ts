import type { OrchestratorConfig } from '../config/config.js';
import type { ComputeBackend } from './backend.js';
import type { BackendLogger } from './logger.js';
import type { RetryOptions } from '../errors/retry-transient.js';
import { LazyKubeRayBackend } from './kuberay/lazy-backend.js';
import { LocalBackend } from './local/local-backend.js';

/** The backends a worker serves: local always; kuberay when a Kubernetes cluster is configured. */
export function createBackends(
  config: OrchestratorConfig,
  logger?: BackendLogger,
  retry?: Partial<RetryOptions>,
): Partial<Record<'local' | 'kuberay', ComputeBackend>> {
  return {
    local: new LocalBackend({
      runRoot: config.RAGEN_RUN_ROOT,
      rayBin: config.rayBin,
      python: config.python,
      nodeIp: config.RAGEN_NODE_IP,
      logger,
    }),
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
