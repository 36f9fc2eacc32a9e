import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { shellQuote, validateArgv } from '../../domain/ragen/entrypoint.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { submissionId } from '../../domain/spec/naming.js';
import { ValidationResultSchema, type ValidationResult } from '../../domain/run/results.js';
import { validationSeeds } from '../../domain/validate/seed-ranges.js';
import { PAYLOAD_ENV_TAG, validationRunnerOf } from '../../domain/validate/validation-runner.js';
import { backendOf } from '../common/backend-of.js';
import { shippedWorkingDir } from '../code/code-shipping.js';
import { rayHeadOf } from '../common/ray-head-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { logTail } from '../../domain/train/log-tail.js';
import { runRayJob } from '../common/ray-job.js';
import { type ValidateInput, validateWithTrainer } from './validate-trainer.js';

/**
 * Stage 6. Separate validation episodes on the cluster, on validation.seed levels only (never
 * training levels), from the final checkpoint, by the spec's runner (validation.runner): the
 * payload's `python -m ragen_toy.validate` (writes results to outPath itself) or the trainer with
 * trainer.val_only=True (see validate-trainer.ts). The result says which runner ran, the env tag,
 * the seeds and the episode count. A retry finds the same job (submission id) and its results file.
 */
export function createValidate(deps: ActivityDeps) {
  return async function validate(input: ValidateInput): Promise<ValidationResult> {
    return validationRunnerOf(input.spec) === 'trainer'
      ? validateWithTrainer(deps, input)
      : validateWithPayload(deps, input);
  };
}

async function validateWithPayload(deps: ActivityDeps, input: ValidateInput): Promise<ValidationResult> {
  const { spec, handle } = input;
  const argv = backendOf(deps, spec.backend).resolveArgv(
    validateArgv(spec, input.checkpointPath, input.outPath),
  );
  const dashboard = await rayHeadOf(deps, handle);
  const workingDir = await shippedWorkingDir(dashboard, spec, dirname(input.outPath));
  const { job, logs } = await runRayJob(dashboard, submissionId(handle.name, 'validate'), shellQuote(argv), {
    pollIntervalMs: deps.pollIntervalMs,
    workingDir,
  });
  if (job.status !== 'SUCCEEDED')
    throw permanent(
      ErrorTypes.ValidationFailed,
      `validation job ${job.status}: ${job.message}\n${logTail(logs)}`,
    );
  const parsed = ValidationResultSchema.safeParse(JSON.parse(await readFile(input.outPath, 'utf8')));
  if (!parsed.success)
    throw permanent(
      ErrorTypes.ValidationFailed,
      `validation results at ${input.outPath} do not match the schema: ${parsed.error.message}`,
    );
  return {
    ...parsed.data,
    runner: 'payload',
    env_tag: parsed.data.env_tag ?? PAYLOAD_ENV_TAG,
    seeds: validationSeeds(spec),
  };
}
