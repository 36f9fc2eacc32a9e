import type { ExperimentSpec } from '../spec/experiment.js';
import { defaultEntrypoint } from '../ragen/entrypoint.js';

export type ValidationRunner = 'payload' | 'trainer';

/** The toy payload plays one env, RAGEN's default tag. */
export const PAYLOAD_ENV_TAG = 'CoordSokoban';

type RunnerFields = Pick<ExperimentSpec, 'backend'> & {
  validation: Pick<ExperimentSpec['validation'], 'runner' | 'envTag'>;
  trainer: Pick<ExperimentSpec['trainer'], 'entrypoint'>;
};

/** `validation.runner`, or its default: the payload's runner locally, the trainer itself on kuberay (RAGEN images). */
export function validationRunnerOf(spec: RunnerFields): ValidationRunner {
  return spec.validation.runner ?? (spec.backend === 'kuberay' ? 'trainer' : 'payload');
}

/** Combinations that can only fail after training has run: refused up front. */
export function validationRunnerIssues(spec: RunnerFields): { path: (string | number)[]; message: string }[] {
  if (validationRunnerOf(spec) !== 'payload') return [];
  const issues: { path: (string | number)[]; message: string }[] = [];
  const how = spec.validation.runner
    ? 'validation.runner is payload'
    : `validation.runner defaults to payload on the ${spec.backend} backend`;
  const entrypoint = spec.trainer.entrypoint ?? defaultEntrypoint(spec.backend);
  if (!entrypoint.some((a) => a.includes('ragen_toy'))) {
    issues.push({
      path: ['validation', 'runner'],
      message: `${how}, which runs python -m ragen_toy.validate, but trainer.entrypoint (${entrypoint.join(' ')}) is not the toy payload, so the image may not have it; set validation.runner: trainer (validates with the trainer itself, trainer.val_only=True)`,
    });
  }
  if (spec.validation.envTag !== PAYLOAD_ENV_TAG) {
    issues.push({
      path: ['validation', 'envTag'],
      message: `${how}, whose levels are ${PAYLOAD_ENV_TAG} only, but validation.envTag is ${spec.validation.envTag}; set validation.runner: trainer or validation.envTag: ${PAYLOAD_ENV_TAG}`,
    });
  }
  return issues;
}
