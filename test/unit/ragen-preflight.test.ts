import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { isAmbiguousValue, overrideValue, overridesOf } from '../../src/domain/ragen/hydra-overrides.js';
import {
  type RagenRule,
  ragenModelPathIssue,
  ragenPreflightIssues,
} from '../../src/domain/ragen/ragen-preflight.js';
import { RAGEN_20DAEDC, RAGEN_5EB79B8, ragenRevisionOf } from '../../src/domain/ragen/ragen-revisions.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { validSpecYaml } from '../helpers/specs.js';

type Trainer = ExperimentSpec['trainer'];

/** The shared test spec on one node, trainer fields and validation edited (the rules read no cluster). */
function specWith(
  trainer: Partial<Trainer> = {},
  validation: Partial<ExperimentSpec['validation']> = {},
): ExperimentSpec {
  const base = parseExperimentSpec(validSpecYaml());
  return {
    ...base,
    trainer: { ...base.trainer, nnodes: 1, ...trainer },
    validation: { ...base.validation, ...validation },
  };
}

describe("RAGEN's train.py pre-flight, refused at load", () => {
  const table: {
    name: string;
    trainer?: Partial<Trainer>;
    validation?: Partial<ExperimentSpec['validation']>;
    rules: RagenRule[];
    field?: (string | number)[];
  }[] = [
    { name: 'the defaults on 1 GPU', trainer: { nGpusPerNode: 1 }, rules: [] },
    { name: '2 GPUs: the orchestrator sets the devices', trainer: { nGpusPerNode: 2 }, rules: [] },
    { name: '8 GPUs', trainer: { nGpusPerNode: 8 }, rules: [] },
    {
      name: '3 GPUs do not divide the mini-batch of 32',
      trainer: { nGpusPerNode: 3 },
      rules: ['mini-batch-divisible'],
      field: ['trainer', 'nGpusPerNode'],
    },
    {
      name: '3 GPUs with a mini-batch of 48',
      trainer: { nGpusPerNode: 3, overrides: { ppo_mini_batch_size: 48 } },
      rules: [],
    },
    {
      name: 'a mini-batch below micro x GPUs',
      trainer: { nGpusPerNode: 8, overrides: { ppo_mini_batch_size: 4 } },
      rules: ['micro-batch-fits'],
      field: ['trainer', 'overrides', 'ppo_mini_batch_size'],
    },
    {
      name: "the actor's own mini-batch key wins over the top-level one",
      trainer: {
        nGpusPerNode: 2,
        overrides: { ppo_mini_batch_size: 32, 'actor_rollout_ref.actor.ppo_mini_batch_size': 1 },
      },
      rules: ['micro-batch-fits'],
    },
    {
      name: 'a micro-batch of 3 on 8 GPUs',
      trainer: { nGpusPerNode: 8, overrides: { micro_batch_size_per_gpu: 3 } },
      rules: ['mini-batch-divisible'],
      field: ['trainer', 'overrides', 'micro_batch_size_per_gpu'],
    },
    {
      name: 'a model path without qwen or llama-3',
      trainer: { overrides: { model_path: '/models/ckpt' } },
      rules: ['model-path'],
      field: ['trainer', 'overrides', 'model_path'],
    },
    {
      name: 'any model once the response mask is off',
      trainer: { overrides: { model_path: '/models/ckpt', enable_response_mask: false } },
      rules: [],
    },
    {
      name: 'CUDA_VISIBLE_DEVICES of the wrong count',
      trainer: { nGpusPerNode: 2, overrides: { 'system.CUDA_VISIBLE_DEVICES': "'0'" } },
      rules: ['cuda-visible-devices'],
      field: ['trainer', 'overrides', 'system.CUDA_VISIBLE_DEVICES'],
    },
    {
      name: 'CUDA_VISIBLE_DEVICES unquoted: Hydra sees a sweep',
      trainer: { nGpusPerNode: 2, overrides: { 'system.CUDA_VISIBLE_DEVICES': '0,1' } },
      rules: ['hydra-ambiguous-value'],
      field: ['trainer', 'overrides', 'system.CUDA_VISIBLE_DEVICES'],
    },
    {
      name: 'too few environments for one mini-batch',
      trainer: { overrides: { 'es_manager.train.env_groups': 1 } },
      rules: ['env-groups-cover-mini-batch'],
      field: ['trainer', 'overrides', 'es_manager.train.env_groups'],
    },
    {
      name: 'a top_p filter keeping a quarter of 128 rollouts: exactly 32',
      trainer: { overrides: { 'actor_rollout_ref.rollout.rollout_filter_value': 0.25 } },
      rules: [],
    },
    {
      name: 'a top_p filter keeping a fifth',
      trainer: { overrides: { 'actor_rollout_ref.rollout.rollout_filter_value': 0.2 } },
      rules: ['env-groups-cover-mini-batch'],
    },
    {
      name: 'single-turn samples count each turn',
      trainer: {
        overrides: {
          'actor_rollout_ref.rollout.rollout_filter_value': 0.2,
          'agent_proxy.context_window_mode': 'single_turn',
        },
      },
      rules: [],
    },
    {
      name: 'an env tag the declared revision has',
      trainer: { ragenRevision: '20daedc' },
      validation: { envTag: 'CoordSokoban' },
      rules: [],
    },
    {
      name: 'CoordSokoban on RAGEN-AI 5eb79b8',
      trainer: { ragenRevision: '5eb79b8' },
      validation: { envTag: 'CoordSokoban' },
      rules: ['env-tag-defined'],
      field: ['validation', 'envTag'],
    },
    {
      name: 'SimpleSokoban on 5eb79b8',
      trainer: { ragenRevision: '5eb79b82cecc31db5662ba3c96b752405692410b' },
      validation: { envTag: 'SimpleSokoban' },
      rules: [],
    },
    {
      name: 'an unknown revision',
      trainer: { ragenRevision: 'abcdef1' },
      rules: ['ragen-revision-known'],
      field: ['trainer', 'ragenRevision'],
    },
    {
      name: '5eb79b8 keeps a quarter of the rollouts: a mini-batch of 64 is too large',
      trainer: { ragenRevision: '5eb79b8', overrides: { ppo_mini_batch_size: 64 } },
      validation: { envTag: 'SimpleSokoban' },
      rules: ['env-groups-cover-mini-batch'],
    },
    {
      name: '5eb79b8 with 2 GPUs and tensor parallelism 1',
      trainer: { ragenRevision: '5eb79b8', nGpusPerNode: 2 },
      validation: { envTag: 'SimpleSokoban' },
      rules: ['tensor-parallel-size'],
      field: ['trainer', 'nGpusPerNode'],
    },
    {
      name: '5eb79b8 with 2 GPUs and tensor parallelism 2',
      trainer: {
        ragenRevision: '5eb79b8',
        nGpusPerNode: 2,
        overrides: { 'actor_rollout_ref.rollout.tensor_model_parallel_size': 2 },
      },
      validation: { envTag: 'SimpleSokoban' },
      rules: [],
    },
    {
      name: '20daedc has no tensor-parallel check',
      trainer: { ragenRevision: '20daedc', nGpusPerNode: 2 },
      rules: [],
    },
    {
      name: 'llama-3 is qwen-only on 5eb79b8',
      trainer: { ragenRevision: '5eb79b8', overrides: { model_path: 'meta-llama/Llama-3.2-1B' } },
      validation: { envTag: 'SimpleSokoban' },
      rules: ['model-path'],
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const issues = ragenPreflightIssues(specWith(row.trainer, row.validation));
      assert.deepEqual(
        issues.map((i) => i.rule),
        row.rules,
        issues.map((i) => i.message).join('\n'),
      );
      if (row.field) assert.deepEqual(issues[0]?.path, row.field);
      for (const i of issues) assert.match(i.message, /RAGEN|Hydra|trainer\.ragenRevision/);
    });
  }

  it('reaches the loader: a field error naming the rule and the fix, before anything is created', () => {
    const yaml = validSpecYaml()
      .replace('  nnodes: 2\n  nGpusPerNode: 1', '  nnodes: 1\n  nGpusPerNode: 3')
      .replace('replicas: 2\n      gpusPerWorker: 1', 'replicas: 1\n      gpusPerWorker: 3');
    assert.throws(
      () => parseExperimentSpec(yaml, 'three.yaml'),
      (err: unknown) =>
        err instanceof SpecError &&
        /trainer\.nGpusPerNode: RAGEN's train\.py asserts ppo_mini_batch_size is divisible/.test(
          err.message,
        ) &&
        /set trainer\.nGpusPerNode to a divisor of 32/.test(err.message),
    );
  });
});

describe("RAGEN's model_path rule (a pure function of the path)", () => {
  for (const [path, ok] of [
    ['Qwen/Qwen2.5-0.5B-Instruct', true],
    ['/mnt/models/qwen2.5-3b', true],
    ['meta-llama/Meta-Llama-3-8B', true],
    ['meta-llama/Llama-2-7b', false],
    ['/models/ckpt', false],
  ] as const) {
    it(`${path}: ${ok ? 'accepted' : 'refused'}`, () => {
      const issue = ragenModelPathIssue(path);
      assert.equal(issue === undefined, ok, issue);
      if (issue) assert.match(issue, /"qwen" or "llama-3"/);
    });
  }
  it('follows the revision: 5eb79b8 accepts qwen only', () => {
    assert.equal(ragenModelPathIssue('meta-llama/Meta-Llama-3-8B', RAGEN_20DAEDC), undefined);
    assert.match(ragenModelPathIssue('meta-llama/Meta-Llama-3-8B', RAGEN_5EB79B8) ?? '', /contains "qwen"/);
  });
});

describe('RAGEN revisions and Hydra override values', () => {
  it('finds a revision by any prefix of 7 or more hex digits, in any case', () => {
    assert.equal(ragenRevisionOf('20DAEDC'), RAGEN_20DAEDC);
    assert.equal(ragenRevisionOf(RAGEN_5EB79B8.commit), RAGEN_5EB79B8);
    assert.equal(ragenRevisionOf('1234567'), undefined);
    assert.ok(!RAGEN_5EB79B8.envTags.includes('CoordSokoban'));
  });

  it('reads values as Hydra does: null, booleans, numbers, quoted strings', () => {
    assert.equal(overrideValue('null'), null);
    assert.equal(overrideValue('True'), true);
    assert.equal(overrideValue('32'), 32);
    assert.equal(overrideValue('1e-6'), 0.000001);
    assert.equal(overrideValue("'0,1'"), '0,1');
    assert.equal(overrideValue('Qwen/Qwen2.5'), 'Qwen/Qwen2.5');
    assert.equal(overridesOf(['python', '--config-name', 'x', '++a.b=1', 'a.b=2']).get('a.b'), '2');
  });

  it('sees the commas Hydra reads as a sweep', () => {
    assert.equal(isAmbiguousValue('0,1'), true);
    assert.equal(isAmbiguousValue("'0,1'"), false);
    assert.equal(isAmbiguousValue("['console','file']"), false);
    assert.equal(isAmbiguousValue('x'), false);
  });
});
