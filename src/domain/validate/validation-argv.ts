import { trainArgv } from '../ragen/entrypoint.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { overrideKey } from '../ragen/hydra-overrides.js';

/**
 * The validation runner for RAGEN images: the training command itself (same entrypoint, config and
 * overrides, so the same model and env settings), turned into verl's validation-only run.
 * - `trainer.val_only=True` with `trainer.val_before_train=True`: verl's fit() validates before the
 *   first step and returns only when both are set (val_only alone would train); both with `++`
 *   (add or override): verl 0.2 (RAGEN-AI 5eb79b8) has no trainer.val_only;
 * - `trainer.resume_mode=resume_path` from the final checkpoint: the validated step is the checkpoint's;
 * - `seed.val` and one group of size 1 per validation environment (RAGEN asserts that the tag
 *   groups' n_groups add up to env_groups), the spec's env tag;
 * - console logger only, and a scratch `default_local_dir`: validation writes nothing where the
 *   checkpoints are.
 * Keys the runner sets replace the same keys of the training command (Hydra takes one value per key).
 */
export function trainerValidationArgv(
  spec: ExperimentSpec,
  checkpointPath: string,
  scratchDir: string,
): string[] {
  const { episodes, seed, envTag } = spec.validation;
  const own = [
    '++trainer.val_only=True',
    '++trainer.val_before_train=True',
    'trainer.resume_mode=resume_path',
    `trainer.resume_from_path=${checkpointPath}`,
    `trainer.default_local_dir=${scratchDir}`,
    "trainer.logger=['console']",
    `seed.val=${seed}`,
    `es_manager.val.env_groups=${episodes}`,
    'es_manager.val.group_size=1',
    `es_manager.val.env_configs.tags=[${envTag}]`,
    `es_manager.val.env_configs.n_groups=[${episodes}]`,
  ];
  const ownKeys = new Set(own.map(overrideKey));
  const base = trainArgv(spec, scratchDir, { mode: 'resume_path', path: checkpointPath });
  return [...base.filter((a) => !ownKeys.has(overrideKey(a))), ...own];
}
