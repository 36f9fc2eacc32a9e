import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import type { ExperimentInput } from '../../src/domain/run/experiment-input.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { ManifestDraft } from '../../src/domain/run/manifest.js';

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

/** The archive's input for a run that succeeded at `finalStep` (no cluster, no validation). */
export function succeededDraft(
  spec: ExperimentSpec,
  checkpointDir: string,
  finalStep: number,
  workflowId = 'wf-1',
): ManifestDraft {
  return {
    experiment: spec.name,
    temporal: { workflowId, runId: 'run-1', namespace: 'default', taskQueue: 'q' },
    provenance: testInput(spec).provenance,
    image: { verified: false, note: 'none' },
    rayVersion: { declared: '2.60.0' },
    environment: { envTag: 'CoordSokoban', overrides: {} },
    seeds: { train: 10000, val: 123 },
    resolvedSpec: spec,
    entrypoint: ['python'],
    cluster: { backend: 'local', shape: { headCpus: 1, workerGroups: [] }, nodes: [], submits: 1 },
    preflight: { checks: [] },
    checkpointDir,
    training: { outcome: 'succeeded', finalStep, totalTrainingSteps: finalStep },
    validation: { outcome: 'skipped' },
    stages: [{ stage: 'archive', attempt: 0, startedAt: '2026-01-01T00:00:00.000Z' }],
    outcome: 'succeeded',
  };
}
