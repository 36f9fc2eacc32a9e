/**
 * Prints, as JSON on stdout, every command line the product builds for RAGEN's train.py over the
 * conformance matrix, made by the product's own code (the functions the workflows and activities
 * call), with the product's load-time verdict on each spec. test/conformance/test_ragen_config.py
 * composes each one with RAGEN's real Hydra configuration and checks train.py's pre-flight rules.
 *
 *   node --import tsx test/conformance/print-argvs.ts > argvs.json
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseYamlMapping } from '../../src/config/yaml-mapping.js';
import { parseCampaignSpec } from '../../src/cli/spec-files/load-campaign.js';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import type { CampaignInput } from '../../src/domain/campaign/campaign.js';
import { trainArgv } from '../../src/domain/ragen/entrypoint.js';
import type { ExperimentInput } from '../../src/domain/run/experiment-input.js';
import { type ExperimentSpec, ExperimentSpecSchema } from '../../src/domain/spec/experiment.js';
import { runSetupIssues } from '../../src/domain/spec/run-setup.js';
import type { ResolvedProvenance } from '../../src/domain/run/provenance.js';
import {
  checkpointPath,
  ledgerPath,
  runCheckpointDir,
  validationResultsPath,
} from '../../src/domain/spec/paths.js';
import { RAGEN_PREFLIGHT_DEFAULTS, ragenPreflightIssues } from '../../src/domain/ragen/ragen-preflight.js';
import { RAGEN_20DAEDC } from '../../src/domain/ragen/ragen-revisions.js';
import { applyParams, childWorkflowId, expandSweep } from '../../src/domain/sweep/sweep-expand.js';
import { trainerValidationArgv } from '../../src/domain/validate/validation-argv.js';
import { attemptInput, newCampaignRun } from '../../src/workflows/campaign-run.js';
import { newExperimentRun } from '../../src/workflows/experiment-run.js';
import type { RunIds } from '../../src/workflows/run-ids.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const provenance: ResolvedProvenance = {
  repoCommit: RAGEN_20DAEDC.commit,
  repoDirty: false,
  repoSource: 'spec',
  submodules: {},
  modelRevision: 'conformance',
  orchestratorVersion: '0.0.0',
};
const ids = (workflowId: string): RunIds => ({
  workflowId,
  runId: 'run',
  namespace: 'default',
  taskQueue: 'conformance',
});

interface Case {
  name: string;
  /** train | resume | validate (the trainer runner) */
  kind: string;
  argv: string[];
  /** RAGEN rules the product refuses this spec for at load (rule ids of src/domain/ragen/ragen-preflight.ts). */
  refusedRules: string[];
  /** Every setup issue the product reports (field: message), for the suite's failure messages. */
  refused: string[];
}
const cases: Case[] = [];

function verdict(spec: ExperimentSpec): Pick<Case, 'refusedRules' | 'refused'> {
  return {
    refusedRules: ragenPreflightIssues(spec).map((i) => i.rule),
    refused: runSetupIssues(spec).map((i) => `${i.field}: ${i.message}`),
  };
}

/** The train argv of an experiment workflow started with `input` under `workflowId`. */
function trainCase(name: string, kind: string, input: ExperimentInput, workflowId: string): void {
  const run = newExperimentRun(input, ids(workflowId));
  cases.push({
    name,
    kind,
    argv: trainArgv(input.spec, run.checkpointDir, run.resume),
    ...verdict(input.spec),
  });
}

/** The trainer validation runner's argv after that run, from its final checkpoint (validate-trainer activity). */
function validateCase(name: string, input: ExperimentInput, workflowId: string): void {
  const run = newExperimentRun(input, ids(workflowId));
  const final = checkpointPath(run.checkpointDir, input.spec.trainer.totalTrainingSteps);
  const scratch = join(dirname(validationResultsPath(run.runDir)), 'validation-trainer');
  cases.push({
    name,
    kind: 'validate',
    argv: trainerValidationArgv(input.spec, final, scratch),
    ...verdict(input.spec),
  });
}

/** All three command lines of one spec: a fresh run, a resumed one, trainer validation. */
function experimentCases(name: string, spec: ExperimentSpec): void {
  const wf = `${spec.name}-wf`;
  trainCase(`${name}/train`, 'train', { spec, provenance }, wf);
  const dir = runCheckpointDir(spec.storage, spec.name, wf);
  const resumeFrom = checkpointPath(dir, spec.trainer.saveFreq);
  trainCase(`${name}/resume`, 'resume', { spec, provenance, resumeFrom, checkpointDir: dir }, `${wf}-r`);
  validateCase(`${name}/validate`, { spec, provenance }, wf);
}

/** Changes to an example: the shape (nnodes, nGpusPerNode), trainer and validation fields. */
interface Edit {
  shape?: [number, number];
  trainer?: Record<string, unknown>;
  validation?: Record<string, unknown>;
  /** The spec's model (replaces the example's); null: none, for a model_path in the overrides. */
  model?: Record<string, unknown> | null;
}
type Mapping = Record<string, unknown>;

/** An example's mapping with `edit` applied (the cluster sized to the shape), unvalidated. */
function exampleMapping(file: string, edit: Edit = {}): Mapping {
  const raw = parseYamlMapping(readFileSync(join(ROOT, 'examples', file), 'utf8'), file);
  const trainer = { ...(raw['trainer'] as Mapping), ...edit.trainer };
  const cluster = { ...(raw['cluster'] as { workerGroups: Mapping[] }) };
  if (edit.shape) {
    const [nnodes, gpus] = edit.shape;
    Object.assign(trainer, { nnodes, nGpusPerNode: gpus });
    cluster.workerGroups = [{ ...cluster.workerGroups[0], replicas: nnodes, gpusPerWorker: gpus }];
  }
  const validation = { ...(raw['validation'] as Mapping), ...edit.validation };
  const { model, ...rest } = raw;
  const chosen = edit.model === undefined ? model : (edit.model ?? undefined);
  return { ...rest, trainer, cluster, validation, ...(chosen ? { model: chosen } : {}) };
}

/** The edited example parsed by the schema; the setup rules are the verdict, not a throw. */
const exampleSpec = (file: string, edit: Edit = {}): ExperimentSpec =>
  ExperimentSpecSchema.parse(exampleMapping(file, edit));

const SEED = 'ragen-sokoban-kuberay.yaml';
const LOCAL = 'sokoban-local.yaml';

// 1. The matrix: the seed example and the local example (validation.runner: trainer), every shape.
for (const nnodes of [1, 2, 4]) {
  for (const gpus of [1, 2, 8]) {
    const shape: [number, number] = [nnodes, gpus];
    experimentCases(`seed/n${nnodes}g${gpus}`, exampleSpec(SEED, { shape }));
    experimentCases(
      `local-trainer/n${nnodes}g${gpus}`,
      exampleSpec(LOCAL, { shape, validation: { runner: 'trainer' } }),
    );
  }
}

// 2. Sweep children with trainer overrides, and an ASHA promotion (sweep workflow: applyParams, child ids).
const sweepBase = exampleMapping(SEED, { shape: [1, 2] });
const sweep = parseSweepMapping(
  {
    name: 'seed-sweep',
    base: sweepBase,
    parameters: {
      grid: {
        'trainer.seedTrain': [10000, 20000],
        'actor_rollout_ref.actor.optim.lr': [0.000001, 0.000003],
        ppo_mini_batch_size: [32, 64],
      },
    },
    scheduler: { type: 'asha', metric: 'val-env/CoordSokoban/success', gracePeriod: 50, promote: true },
  },
  'conformance sweep',
);
expandSweep(sweep).forEach((params, index) => {
  const applied = applyParams(sweep.base, params);
  if (!applied.ok) throw new Error(`sweep child ${index}: ${JSON.stringify(applied.issues)}`);
  const id = childWorkflowId('seed-sweep', index, params);
  trainCase(`sweep/child-${index}`, 'train', { spec: applied.spec, provenance }, id);
  if (index === 1) {
    // Promoted at rung 50: a new workflow resumes the stopped child's last kept checkpoint.
    const { storage, name } = applied.spec;
    const checkpointDir = runCheckpointDir(storage, name, id);
    const input: ExperimentInput = {
      spec: applied.spec,
      provenance,
      reportValidations: true,
      checkpointDir,
      ledgerPath: ledgerPath(storage.archiveDir, name, id),
      resumeFrom: checkpointPath(checkpointDir, 50),
    };
    trainCase(`sweep/child-${index}-promoted`, 'resume', input, `${id}-p50`);
    validateCase(`sweep/child-${index}-promoted/validate`, input, `${id}-p50`);
  }
});

// 3. A campaign's second attempt after `extend` 100 steps, resuming the first attempt's checkpoint:
// the campaign example (its loader: experiment + budgets) on the trainer runner, and the seed example.
const campaignExample = parseCampaignSpec(
  readFileSync(join(ROOT, 'examples', 'sokoban-campaign.yaml'), 'utf8').replace(
    'validation:\n',
    'validation:\n  runner: trainer\n',
  ),
  'sokoban-campaign.yaml',
);
for (const [label, spec] of [
  ['seed', exampleSpec(SEED, { shape: [2, 8] })],
  ['local-trainer', campaignExample.experiment],
] as const) {
  const campaign: CampaignInput = { spec, budgets: campaignExample.budgets, provenance };
  const run = newCampaignRun(campaign, ids(`${spec.name}-campaign`));
  run.state.totalTrainingSteps += 100; // the extend Update's effect on the campaign's state
  const latest = { path: checkpointPath(run.checkpointDir, spec.trainer.totalTrainingSteps) };
  const input = attemptInput(run, latest);
  if (input.spec.trainer.totalTrainingSteps !== spec.trainer.totalTrainingSteps + 100)
    throw new Error('the attempt does not carry the extended step budget');
  trainCase(`campaign-${label}/attempt-2-extended`, 'resume', input, `${spec.name}-campaign-a2`);
  validateCase(`campaign-${label}/attempt-2-extended/validate`, input, `${spec.name}-campaign-a2`);
}

// 4. Specs the product refuses at load, each rule at least once: RAGEN must refuse their argvs too.
const refusedSpecs: Record<string, Edit> = {
  'three-gpus': { shape: [1, 3] },
  'mini-batch-below-gpus': { shape: [1, 8], trainer: { overrides: { ppo_mini_batch_size: 4 } } },
  'micro-batch-3-on-8': { shape: [1, 8], trainer: { overrides: { micro_batch_size_per_gpu: 3 } } },
  'actor-mini-batch-key': {
    shape: [1, 2],
    trainer: { overrides: { 'actor_rollout_ref.actor.ppo_mini_batch_size': 1 } },
  },
  'model-path': { model: null, trainer: { overrides: { model_path: '/models/ckpt' } } },
  'model-directory': { model: { path: '/mnt/ragen/models/ckpt-7b' } },
  'cuda-devices-count': {
    shape: [1, 2],
    trainer: { overrides: { 'system.CUDA_VISIBLE_DEVICES': "'0'" } },
  },
  'cuda-devices-unquoted': { trainer: { overrides: { 'system.CUDA_VISIBLE_DEVICES': '0,1' } } },
  'too-few-env-groups': {
    trainer: {
      overrides: { 'es_manager.train.env_groups': 1, 'es_manager.train.env_configs.n_groups': '[1]' },
    },
  },
  'filter-keeps-a-fifth': {
    trainer: { overrides: { 'actor_rollout_ref.rollout.rollout_filter_value': 0.2 } },
  },
  'env-tag': { trainer: { ragenRevision: '20daedc' }, validation: { envTag: 'CoordSokobanHard' } },
};
for (const [label, edit] of Object.entries(refusedSpecs))
  experimentCases(`refused/${label}`, exampleSpec(SEED, edit));

// 5. Specs at the rules' edges that the product accepts: RAGEN must accept them too.
const edgeSpecs: Record<string, Edit> = {
  'three-gpus-mini-batch-48': { shape: [1, 3], trainer: { overrides: { ppo_mini_batch_size: 48 } } },
  'filter-keeps-exactly-32': {
    trainer: { overrides: { 'actor_rollout_ref.rollout.rollout_filter_value': 0.25 } },
  },
  'single-turn-samples': {
    trainer: {
      overrides: {
        'actor_rollout_ref.rollout.rollout_filter_value': 0.2,
        'agent_proxy.context_window_mode': 'single_turn',
      },
    },
  },
  'hub-model': {
    model: { hub: 'Qwen/Qwen2.5-0.5B-Instruct', revision: 'c'.repeat(40), hfHome: '/mnt/ragen/hf' },
  },
  'own-devices-and-model': {
    shape: [1, 2],
    model: null,
    trainer: {
      overrides: { 'system.CUDA_VISIBLE_DEVICES': "'2,3'", model_path: '/models/Qwen2.5-0.5B-Instruct' },
      ragenRevision: '20daedc',
    },
    validation: { envTag: 'SimpleSokoban' },
  },
};
for (const [label, edit] of Object.entries(edgeSpecs))
  experimentCases(`edge/${label}`, exampleSpec(SEED, edit));

process.stdout.write(
  `${JSON.stringify(
    {
      ragen: {
        commit: RAGEN_20DAEDC.commit,
        envTags: RAGEN_20DAEDC.envTags,
        modelPathMarkers: RAGEN_20DAEDC.modelPathMarkers,
        defaults: RAGEN_PREFLIGHT_DEFAULTS,
      },
      cases,
    },
    null,
    1,
  )}\n`,
);
