import type { ExperimentSpec } from '../spec/experiment.js';

/**
 * The environment seeds a run uses (contract §2.2). Training: group g of rollout t gets
 * seed.train + t x es_manager.train.env_groups + g, so a run covers seedTrain .. seedTrain +
 * totalTrainingSteps x env_groups - 1 (a resumed RAGEN run restarts its counter inside that range).
 * Validation: seed.val + i for every validation environment, the same set at every validation.
 */
export interface SeedRange {
  first: number;
  last: number;
}

/** RAGEN's base.yaml (and the payload's) es_manager.train.env_groups. */
export const DEFAULT_TRAIN_ENV_GROUPS = 8;

type SeedFields = {
  trainer: Pick<ExperimentSpec['trainer'], 'seedTrain' | 'totalTrainingSteps' | 'overrides'>;
  validation: Pick<ExperimentSpec['validation'], 'seed' | 'episodes'>;
};

export function trainEnvGroups(overrides: Record<string, string | number | boolean>): number {
  const value = Number(overrides['es_manager.train.env_groups'] ?? DEFAULT_TRAIN_ENV_GROUPS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_TRAIN_ENV_GROUPS;
}

export function trainingSeeds(spec: SeedFields): SeedRange {
  const { seedTrain, totalTrainingSteps, overrides } = spec.trainer;
  return { first: seedTrain, last: seedTrain + totalTrainingSteps * trainEnvGroups(overrides) - 1 };
}

export function validationSeeds(spec: SeedFields): SeedRange {
  return { first: spec.validation.seed, last: spec.validation.seed + spec.validation.episodes - 1 };
}

/** Validation on training levels would measure memory, not skill: overlapping ranges are refused. */
export function seedRangeIssues(spec: SeedFields): { path: (string | number)[]; message: string }[] {
  const train = trainingSeeds(spec);
  const val = validationSeeds(spec);
  if (val.last < train.first || train.last < val.first) return [];
  const groups = trainEnvGroups(spec.trainer.overrides);
  const below = train.first - spec.validation.episodes;
  const lower = below >= 0 ? ` (or to ${below} or below)` : '';
  const fix = `Set validation.seed to ${train.last + 1} or above${lower}, or trainer.seedTrain to ${val.last + 1} or above`;
  return [
    {
      path: ['validation', 'seed'],
      message:
        `validation seeds ${val.first}..${val.last} (validation.seed=${spec.validation.seed}, validation.episodes=${spec.validation.episodes}) ` +
        `overlap the training seeds ${train.first}..${train.last} (trainer.seedTrain=${spec.trainer.seedTrain} + trainer.totalTrainingSteps=${spec.trainer.totalTrainingSteps} x es_manager.train.env_groups=${groups}); ` +
        `validation would replay training levels. ${fix}`,
    },
  ];
}
