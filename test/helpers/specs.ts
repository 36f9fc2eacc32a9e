import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import type { ExperimentInput } from '../../src/domain/experiment-input.js';
import type { ExperimentSpec } from '../../src/domain/experiment.js';

/** validation.seed 5000: clear of every training seed range the tests use (their sweeps start trainer.seedTrain at 1). */
export const validSpecYaml = (storageRoot = '/tmp/ragen-test') => `
name: sokoban-test
backend: local
rayVersion: 2.60.0
cluster:
  workerGroups:
    - name: gpu-workers
      replicas: 2
      gpusPerWorker: 1
trainer:
  nnodes: 2
  nGpusPerNode: 1
  totalTrainingSteps: 20
  saveFreq: 10
storage:
  checkpointDir: ${storageRoot}/checkpoints
  archiveDir: ${storageRoot}/archive
validation:
  episodes: 32
  seed: 5000
deadlines:
  joinSeconds: 60
  runSeconds: 3600
  noProgressSeconds: 60
`;

export function testSpec(overrides: Partial<ExperimentSpec> = {}, storageRoot?: string): ExperimentSpec {
  return { ...parseExperimentSpec(validSpecYaml(storageRoot)), ...overrides };
}

export function testInput(spec: ExperimentSpec = testSpec()): ExperimentInput {
  return {
    spec,
    provenance: {
      repoCommit: '0'.repeat(40),
      repoDirty: false,
      repoSource: 'spec',
      submodules: {},
      modelRevision: 'test',
      orchestratorVersion: '0.0.0',
    },
  };
}
