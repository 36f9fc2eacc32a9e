import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { dockerConfigPath } from '../registry/auth.js';
import {
  type TemporalConnectionSettings,
  temporalConnectionSettings,
} from '../temporal/temporal-connection.js';

/** The repository root (src/ or dist/ sits right below it). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const ConfigSchema = z.object({
  RAGEN_TASK_QUEUE: z.string().default('ragen-orchestrator'),
  /** Short on purpose: Ray puts unix sockets under it, and socket paths are limited to 107 bytes. */
  RAGEN_RUN_ROOT: z
    .string()
    .startsWith('/', 'RAGEN_RUN_ROOT must be absolute')
    .max(24, 'RAGEN_RUN_ROOT must be at most 24 characters (Ray socket paths are limited to 107 bytes)')
    .default('/tmp/ro'),
  RAGEN_VENV: z.string().default(join(REPO_ROOT, '.venv')),
  /** Ray rewrites 127.0.0.1 to the host's address; another loopback address keeps it on loopback. */
  RAGEN_NODE_IP: z.string().default('127.0.0.2'),
  RAGEN_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(2000),
  /** How long a node the link test names stays in the node ledger (avoided by every new cluster). */
  RAGEN_NODE_SUSPECT_HOURS: z.coerce.number().positive().default(24),
  /** kuberay: label link-suspect Nodes `ragen-orchestrator.io/link-suspect` (needs deploy/worker/node-labels-rbac.yaml). */
  RAGEN_LABEL_SUSPECT_NODES: z.enum(['0', '1']).default('0'),
  /** A training checkpoint is signalled to the workflow (history) at most this often; 0: every one. */
  RAGEN_CHECKPOINT_SIGNAL_SECONDS: z.coerce.number().int().nonnegative().default(600),
  /** Worker log level (JSON lines); the CLI shows WARN and above unless set. */
  RAGEN_LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).optional(),
  /** The prebuilt workflow bundle (npm run build): a path, or `off` to bundle on start. */
  RAGEN_WORKFLOW_BUNDLE: z.string().optional(),
  /** kuberay backend: on when set to 1, or when a kubeconfig is named or the worker runs in a pod. */
  RAGEN_KUBERAY: z.enum(['0', '1']).optional(),
  /** Kubeconfig file; unset: KUBECONFIG, ~/.kube/config, then the in-cluster service account. */
  RAGEN_KUBECONFIG: z.string().optional(),
  RAGEN_KUBERAY_NAMESPACE: z
    .string()
    .regex(
      /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
      'RAGEN_KUBERAY_NAMESPACE must be a Kubernetes namespace name',
    )
    .default('default'),
  /** service: head Service DNS (worker in the cluster); head-status: status.head.podIP + endpoints.dashboard. */
  RAGEN_KUBERAY_DASHBOARD: z.enum(['service', 'head-status']).default('service'),
  /**
   * The worker's operator endpoint (/metrics, /healthz, /readyz) on all interfaces: a port, or `off`.
   * Off unless set: several workers on one host (tests, a bench) would fight over a fixed port; the
   * shipped Deployment (configmap.yaml) and docker-compose set 9464.
   */
  RAGEN_METRICS_PORT: z
    .union([z.literal('off'), z.coerce.number().int().min(1).max(65535)], {
      error: 'RAGEN_METRICS_PORT must be a port number (1-65535) or off',
    })
    .default('off'),
  /** The Temporal SDK's own Prometheus exporter, on loopback; /metrics appends what it serves. */
  RAGEN_SDK_METRICS_PORT: z.coerce.number().int().min(1).max(65535).default(9465),
  /** Team budgets (budgets.yaml: team → GPU-hours per period); unset: no run is budgeted. */
  RAGEN_BUDGETS_FILE: z.string().min(1).optional(),
  KUBECONFIG: z.string().optional(),
  KUBERNETES_SERVICE_HOST: z.string().optional(),
});

/** The environment is not usable (a value of the wrong form): names the variable and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type OrchestratorConfig = z.infer<typeof ConfigSchema> & {
  /** Temporal address, namespace, TLS and API key, read as the `temporal` CLI reads them. */
  temporal: TemporalConnectionSettings;
  rayBin: string;
  python: string;
  temporalBin: string;
  testServerBin: string;
  dockerConfigPath: string;
  kuberayEnabled: boolean;
};

/** Parse the environment at the boundary (never at import time). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      `bad environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const c = parsed.data;
  const bin = (name: string) => join(c.RAGEN_VENV, 'bin', name);
  const kuberayEnabled =
    c.RAGEN_KUBERAY === undefined
      ? Boolean(c.RAGEN_KUBECONFIG || c.KUBECONFIG || c.KUBERNETES_SERVICE_HOST)
      : c.RAGEN_KUBERAY === '1';
  return {
    ...c,
    temporal: temporalConnectionSettings(env),
    rayBin: bin('ray'),
    python: bin('python'),
    temporalBin: bin('temporal'),
    testServerBin: bin('temporal-test-server'),
    dockerConfigPath: dockerConfigPath(env),
    kuberayEnabled,
  };
}
