import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trainArgv } from '../../src/domain/ragen/entrypoint.js';
import {
  environmentProbeArgv,
  environmentOfFailureDetails,
  splitProbeResults,
} from '../../src/domain/join/environment-probe.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { IMAGE_REQUIRES, resolvedImageContract, trainerKind } from '../../src/domain/join/image-contract.js';
import { modelDirectory, modelJobEnv } from '../../src/domain/model/model.js';
import { kuberaySpecYaml } from '../helpers/kuberay-specs.js';
import { testSpec, validSpecYaml } from '../helpers/specs.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';

const REVISION = 'a'.repeat(40);

/** The load-time issues of a spec, as the CLI prints them (`field: message`). */
function issuesOf(yaml: string): string[] {
  try {
    parseExperimentSpec(yaml);
    return [];
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return err.issues.map((i) => `${i.field}: ${i.message}`);
  }
}

const ragen = (): ExperimentSpec => ({
  ...parseExperimentSpec(kuberaySpecYaml('/mnt/shared')),
});

describe('image contract defaults by trainer kind', () => {
  it('the toy payload needs what the venv has; RAGEN needs torch, verl, ragen, vllm, flash_attn, hydra', () => {
    assert.equal(trainerKind(['python', '-m', 'ragen_toy.train']), 'payload');
    assert.equal(trainerKind(['python', 'train.py']), 'ragen');
    assert.equal(trainerKind(['/opt/conda/bin/python', '-m', 'ragen.trainer']), 'ragen');
    const local = resolvedImageContract(testSpec(), ['python', '-m', 'ragen_toy.train']);
    assert.deepEqual(local, { kind: 'payload', requires: ['ragen_toy', 'numpy', 'ray'], gpuCheck: false });
    const real = resolvedImageContract(ragen(), ['python', 'train.py']);
    assert.deepEqual(real.requires, [...IMAGE_REQUIRES.ragen]);
    assert.deepEqual(IMAGE_REQUIRES.ragen, ['torch', 'verl', 'ragen', 'vllm', 'flash_attn', 'hydra']);
    assert.equal(real.gpuCheck, true);
    const own = resolvedImageContract(
      { imageContract: { requires: ['torch'], python: '3.12', gpuCheck: false } },
      ['python', 'train.py'],
    );
    assert.deepEqual(own, { kind: 'ragen', requires: ['torch'], python: '3.12', gpuCheck: false });
  });

  it('the probe argv carries the contract, the run dir, the model and the trainer entrypoint', () => {
    const spec = { ...ragen(), model: { path: '/mnt/shared/models/Qwen2.5-0.5B-Instruct' } };
    const argv = environmentProbeArgv(spec, '/mnt/shared/checkpoints/x/wf', '/mnt/shared/archive/env.json');
    const arg = (flag: string) => argv[argv.indexOf(flag) + 1];
    assert.deepEqual(argv.slice(0, 3), ['python', '-m', 'ragen_probes.environment']);
    assert.equal(arg('--requires'), 'torch,verl,ragen,vllm,flash_attn,hydra');
    assert.equal(arg('--gpus-per-node'), '1');
    assert.equal(arg('--checkpoint-dir'), '/mnt/shared/checkpoints/x/wf');
    assert.equal(arg('--model-path'), '/mnt/shared/models/Qwen2.5-0.5B-Instruct');
    assert.deepEqual(JSON.parse(arg('--entrypoint-json') ?? ''), ['python', 'train.py']);
    const local = environmentProbeArgv(testSpec(), '/tmp/c', '/tmp/o.json');
    assert.equal(local[local.indexOf('--gpus-per-node') + 1], '0', 'logical GPUs: no torch count');
    assert.ok(!local.includes('--model-path'));
  });

  it('imageContract fields are checked at load with the fix', () => {
    const base = validSpecYaml('/tmp/r');
    assert.match(
      issuesOf(`${base}imageContract:\n  requires: [flash-attn]\n`).join(),
      /imageContract\.requires\[0\]: a Python module name such as flash_attn/,
    );
    assert.match(
      issuesOf(`${base}imageContract:\n  python: "3"\n`).join(),
      /imageContract\.python: a major\.minor version such as 3\.12/,
    );
  });
});

describe('model: a directory on shared storage, or a pinned Hub revision staged there', () => {
  it('model_path is the directory, or the staged snapshot of the revision', () => {
    assert.equal(modelDirectory({ path: '/mnt/m/qwen' }), '/mnt/m/qwen');
    assert.equal(
      modelDirectory({ hub: 'Qwen/Qwen2.5-0.5B-Instruct', revision: REVISION, hfHome: '/mnt/hf/' }),
      `/mnt/hf/hub/models--Qwen--Qwen2.5-0.5B-Instruct/snapshots/${REVISION}`,
    );
    const spec = { ...ragen(), model: { path: '/mnt/shared/models/qwen' } };
    const argv = trainArgv(spec, '/mnt/shared/c', { mode: 'disable' });
    assert.ok(argv.includes('model_path=/mnt/shared/models/qwen'));
    assert.ok(
      !trainArgv(ragen(), '/mnt/shared/c', { mode: 'disable' }).some((a) => a.startsWith('model_path=')),
    );
  });

  it('a hub model trains offline from HF_HOME; a path model sets no Hugging Face env', () => {
    assert.deepEqual(modelJobEnv({ hub: 'Qwen/Q', revision: REVISION, hfHome: '/mnt/hf' }), {
      HF_HOME: '/mnt/hf',
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
    });
    assert.deepEqual(modelJobEnv({ path: '/mnt/m' }), {});
    assert.deepEqual(modelJobEnv(undefined), {});
  });

  it('refuses at load what cannot be staged or read by every pod, naming the field and the fix', () => {
    const base = validSpecYaml('/tmp/r');
    const cases: [string, RegExp][] = [
      ['model: {}', /model\.path: set either model\.path .* or model\.hub/],
      ['model: {path: relative/dir}', /model\.path: must be an absolute path/],
      ['model: {hub: Qwen/Q, hfHome: /tmp/hf}', /model\.revision: pin model\.hub Qwen\/Q to a commit/],
      [`model: {hub: Qwen/Q, revision: main, hfHome: /tmp/hf}`, /model\.revision: the full 40-hex commit/],
      [
        `model: {hub: Qwen/Q, revision: ${REVISION}}`,
        /model\.hfHome: an absolute directory on shared storage/,
      ],
      [
        `model: {path: /m, revision: ${REVISION}}`,
        /model\.revision: model\.revision and model\.hfHome go with model\.hub/,
      ],
      ['model: {hub: not a repo}', /model\.hub: a Hugging Face repository id/],
    ];
    for (const [yaml, expected] of cases)
      assert.match(issuesOf(`${base}${yaml}\n`).join('\n'), expected, yaml);
    assert.deepEqual(issuesOf(`${base}model: {path: /tmp/r/models/qwen}\n`), []);
    const kube = kuberaySpecYaml('/mnt/shared');
    assert.match(
      issuesOf(`${kube}model: {path: /data/models/qwen}\n`).join(),
      /model\.path: must be under kuberay\.storage\.mountPath \(\/mnt\/shared\)/,
    );
    assert.match(
      issuesOf(
        `${base}model: {path: /m}\n`.replace('saveFreq: 10', 'saveFreq: 10\n  overrides: {model_path: /x}'),
      ).join(),
      /trainer\.overrides\.model_path: model sets model_path/,
    );
  });
});

describe('the probe record travels in the all-reduce result and is recorded once', () => {
  const record = {
    ok: true,
    nodes: [{ node: 'head 127.0.0.2 (abc)' }],
    failures: [],
    probePackage: 'gcs://_ray_pkg_x.zip',
  };
  it('split apart for the manifest; taken from an ImageContractUnmet when the check threw', () => {
    const split = splitProbeResults({ ok: true, path: 'ray-ring-numpy', world_size: 2, environment: record });
    assert.deepEqual(split.environment, record);
    assert.equal(split.allReduce?.['environment'], undefined);
    assert.equal(split.allReduce?.path, 'ray-ring-numpy');
    const failed = environmentOfFailureDetails([{ failures: [], environment: { ...record, ok: false } }]);
    assert.equal(splitProbeResults(undefined, failed).environment?.ok, false);
    assert.deepEqual(splitProbeResults(undefined, undefined), {
      allReduce: undefined,
      environment: undefined,
    });
    assert.equal(environmentOfFailureDetails(['x']), undefined);
  });
});
