import { dirname, join } from 'node:path';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { stepOfCheckpointPath } from '../../domain/campaign/campaign.js';
import { shellQuote } from '../../domain/ragen/entrypoint.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { submissionId } from '../../domain/spec/naming.js';
import type { ValidationResult } from '../../domain/run/results.js';
import { validationSeeds } from '../../domain/validate/seed-ranges.js';
import { trainerValidationArgv } from '../../domain/validate/validation-argv.js';
import { backendOf } from '../common/backend-of.js';
import { shippedWorkingDir } from '../code/code-shipping.js';
import { rayHeadOf } from '../common/ray-head-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { logTail } from '../../domain/train/log-tail.js';
import { runRayJob } from '../common/ray-job.js';
import { modelJobEnv } from '../../domain/model/model.js';
import { readTrainerValidation, validationTagsIn } from './validation-log.js';
import { writeOnce } from '../common/write-once.js';

export interface ValidateInput {
  spec: ExperimentSpec;
  handle: ClusterHandle;
  checkpointPath: string;
  outPath: string;
}

/**
 * Validation by the trainer itself (RAGEN images): the training entrypoint with
 * trainer.val_only=True from the final checkpoint, as a Ray job; the result is read from verl's
 * console line (`val-env/<tag>/success`, `pass@k`) and written once to outPath. A retry finds the
 * same job (submission id) and writes the same bytes.
 */
export async function validateWithTrainer(
  deps: ActivityDeps,
  input: ValidateInput,
): Promise<ValidationResult> {
  const { spec, handle, checkpointPath, outPath } = input;
  const tag = spec.validation.envTag;
  const argv = backendOf(deps, spec.backend).resolveArgv(
    trainerValidationArgv(spec, checkpointPath, join(dirname(outPath), 'validation-trainer')),
  );
  const dashboard = await rayHeadOf(deps, handle);
  // The tree that trained validates too (`code`: packed once for the run, next to the manifest).
  const workingDir = await shippedWorkingDir(dashboard, spec, dirname(outPath));
  const { job, logs } = await runRayJob(dashboard, submissionId(handle.name, 'validate'), shellQuote(argv), {
    pollIntervalMs: deps.pollIntervalMs,
    env: modelJobEnv(spec.model),
    workingDir,
  });
  if (job.status !== 'SUCCEEDED') {
    throw permanent(
      ErrorTypes.ValidationFailed,
      `the trainer's validation run (trainer.val_only=True) ended ${job.status}: ${job.message}\n${logTail(logs)}`,
    );
  }
  const read = readTrainerValidation(logs, tag);
  if (!read) {
    const seen = validationTagsIn(logs);
    throw permanent(
      ErrorTypes.ValidationFailed,
      `the trainer's validation run printed no val-env/${tag}/success line (tags that printed one: ${seen.join(', ') || 'none'}); ` +
        `set validation.envTag to the tag es_manager.val validates, and keep 'console' in the trainer's loggers. Log tail:\n${logTail(logs)}`,
    );
  }
  const step = stepOfCheckpointPath(checkpointPath);
  if (read.step !== step) {
    throw permanent(
      ErrorTypes.ValidationFailed,
      `the trainer validated step ${read.step}, not the checkpoint's step ${step} (${checkpointPath}): it did not resume from the checkpoint`,
    );
  }
  const result: ValidationResult = {
    runner: 'trainer',
    env_tag: tag,
    checkpoint: checkpointPath,
    step,
    episodes: spec.validation.episodes,
    seed: spec.validation.seed,
    seeds: validationSeeds(spec),
    success_rate: read.success,
    pass_at_k: read.passAtK,
    mean_actions: read.metrics[`val-env/${tag}/num_actions`],
    metrics: read.metrics,
    entrypoint: argv,
  };
  const written = await writeOnce(outPath, `${JSON.stringify(result, null, 1)}\n`);
  if (written.existing) {
    throw permanent(
      ErrorTypes.ValidationFailed,
      `${outPath} already holds other validation results (sha256 ${written.existing}); it is never overwritten`,
    );
  }
  return result;
}
