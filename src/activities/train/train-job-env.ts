import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { modelJobEnv } from '../../domain/model/model.js';
import { metricsPath } from '../../domain/spec/paths.js';
import { type WandbIds, wandbJobEnv } from '../../domain/tracking/wandb-env.js';
import { makeSharedDir, sharedGroup } from '../common/shared-dirs.js';

/** The checkpoint folder made (shared with the Pods); the job's runtime_env.env_vars: the file logger's path and the W&B run's ids. */
export async function trainJobEnv(
  spec: ExperimentSpec,
  checkpointDir: string,
  wandb: WandbIds,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  // The trainer's ranks write checkpoints there, as the Pods' user (shared-dirs.ts); and verl
  // 0.6 opens the file logger's path without creating its directory.
  await makeSharedDir(checkpointDir, sharedGroup(spec));
  if (spec.trainer.loggers.includes('file')) env['VERL_FILE_LOGGER_PATH'] = metricsPath(checkpointDir);
  Object.assign(env, wandbJobEnv(spec, wandb));
  // A hub model was staged into HF_HOME on shared storage at preflight: every node loads it offline.
  Object.assign(env, modelJobEnv(spec.model));
  // The key from the worker's environment (local); on kuberay a Secret in kuberay.head.env holds it.
  if (env.WANDB_RUN_ID && spec.backend === 'local' && process.env.WANDB_API_KEY)
    env.WANDB_API_KEY = process.env.WANDB_API_KEY;
  return env;
}
