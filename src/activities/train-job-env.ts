import { mkdir } from 'node:fs/promises';
import type { ExperimentSpec } from '../domain/experiment.js';
import { metricsPath } from '../domain/paths.js';
import { type WandbIds, wandbJobEnv } from '../domain/wandb-env.js';

/** The training job's runtime_env.env_vars: the file logger's path and the W&B run's ids. */
export async function trainJobEnv(
  spec: ExperimentSpec,
  checkpointDir: string,
  wandb: WandbIds,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  if (spec.trainer.loggers.includes('file')) {
    // verl 0.6 opens the file logger's path without creating its directory.
    await mkdir(checkpointDir, { recursive: true });
    env['VERL_FILE_LOGGER_PATH'] = metricsPath(checkpointDir);
  }
  Object.assign(env, wandbJobEnv(spec, wandb));
  // The key from the worker's environment (local); on kuberay a Secret in kuberay.head.env holds it.
  if (env.WANDB_RUN_ID && spec.backend === 'local' && process.env.WANDB_API_KEY)
    env.WANDB_API_KEY = process.env.WANDB_API_KEY;
  return env;
}
