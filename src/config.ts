import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { dockerConfigPath } from './registry/auth.js';

/** The repository root (src/ or dist/ sits right below it). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const ConfigSchema = z.object({
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  RAGEN_TASK_QUEUE: z.string().default('ragen-orchestrator'),
  /** Short on purpose: Ray puts unix sockets under it, and socket paths are limited to 107 bytes. */
  RAGEN_RUN_ROOT: z.string().startsWith('/', 'RAGEN_RUN_ROOT must be absolute').max(24, 'RAGEN_RUN_ROOT must be at most 24 characters (Ray socket paths are limited to 107 bytes)').default('/tmp/ro'),
  RAGEN_VENV: z.string().default(join(REPO_ROOT, '.venv')),
  /** Ray rewrites 127.0.0.1 to the host's address; another loopback address keeps it on loopback. */
  RAGEN_NODE_IP: z.string().default('127.0.0.2'),
  RAGEN_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(2000),
});

export type OrchestratorConfig = z.infer<typeof ConfigSchema> & { rayBin: string; python: string; temporalBin: string; testServerBin: string; dockerConfigPath: string };

/** Parse the environment at the boundary (never at import time). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`bad environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const c = parsed.data;
  const bin = (name: string) => join(c.RAGEN_VENV, 'bin', name);
  return { ...c, rayBin: bin('ray'), python: bin('python'), temporalBin: bin('temporal'), testServerBin: bin('temporal-test-server'), dockerConfigPath: dockerConfigPath(env) };
}
