import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trainArgv } from '../../src/domain/ragen/entrypoint.js';
import { ExperimentSpecSchema, type ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { overridesOf } from '../../src/domain/ragen/hydra-overrides.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testSpec } from '../helpers/specs.js';

const ragenSpec = (): ExperimentSpec => {
  const spec = kuberaySpec('/mnt/shared');
  return { ...spec, trainer: { ...spec.trainer, entrypoint: undefined } };
};

describe('train argv (composed with the real RAGEN config in test/conformance)', () => {
  it('force-adds (++) what an older verl may lack: ray_kwargs.ray_init.address', () => {
    const argv = trainArgv(ragenSpec(), '/mnt/shared/ckpt', { mode: 'disable' });
    assert.ok(argv.includes('++ray_kwargs.ray_init.address=auto'));
    assert.ok(
      !argv.some((a) => /^\+[^+]/.test(a)),
      `no plain + (fails once the key exists): ${argv.join(' ')}`,
    );
  });

  it("sets system.CUDA_VISIBLE_DEVICES to n quoted devices for n > 1 GPUs per node (RAGEN's default is '0')", () => {
    const withGpus = (n: number, overrides: ExperimentSpec['trainer']['overrides'] = {}) => {
      const spec = ragenSpec();
      return trainArgv({ ...spec, trainer: { ...spec.trainer, nGpusPerNode: n, overrides } }, '/c', {
        mode: 'disable',
      });
    };
    assert.ok(!withGpus(1).some((a) => a.includes('CUDA_VISIBLE_DEVICES')));
    assert.equal(overridesOf(withGpus(2)).get('system.CUDA_VISIBLE_DEVICES'), "'0,1'");
    assert.ok(withGpus(8).includes("system.CUDA_VISIBLE_DEVICES='0,1,2,3,4,5,6,7'"));
    const own = withGpus(2, { 'system.CUDA_VISIBLE_DEVICES': "'2,3'" });
    assert.deepEqual(
      own.filter((a) => a.startsWith('system.CUDA_VISIBLE_DEVICES=')),
      ["system.CUDA_VISIBLE_DEVICES='2,3'"],
      "the spec's own value, once",
    );
  });

  it('asks verl only for the console logger by default (verl < 0.4 refuses file)', () => {
    const argv = trainArgv(ragenSpec(), '/mnt/shared/ckpt', { mode: 'disable' });
    assert.ok(argv.includes("trainer.logger=['console']"));
    assert.ok(!argv.some((a) => a.includes('VERL_FILE_LOGGER_PATH')));
  });

  it('asks for the file logger when the spec does (its path travels in the job runtime_env, not the argv)', () => {
    const spec = ragenSpec();
    spec.trainer.loggers = ['console', 'file'];
    const argv = trainArgv(spec, '/mnt/shared/ckpt', { mode: 'disable' });
    assert.ok(argv.includes("trainer.logger=['console','file']"));
    // Ray refuses a driver whose ray.init repeats an env var of the job's runtime_env.
    assert.ok(!argv.some((a) => a.includes('VERL_FILE_LOGGER_PATH')));
  });

  it('keeps every actor and critic checkpoint unless the spec overrides one', () => {
    const argv = trainArgv(ragenSpec(), '/c', { mode: 'disable' });
    assert.ok(argv.includes('trainer.max_actor_ckpt_to_keep=null'));
    assert.ok(argv.includes('trainer.max_critic_ckpt_to_keep=null'));
    const spec = ragenSpec();
    spec.trainer.overrides = { 'trainer.max_critic_ckpt_to_keep': 3 };
    const overridden = trainArgv(spec, '/c', { mode: 'disable' });
    assert.deepEqual(
      overridden.filter((a) => a.startsWith('trainer.max_critic_ckpt_to_keep=')),
      ['trainer.max_critic_ckpt_to_keep=3'],
    );
  });

  it("runs RAGEN's `python train.py` on kuberay and the toy payload locally; the interpreter comes from the spec", () => {
    assert.deepEqual(trainArgv(ragenSpec(), '/c', { mode: 'disable' }).slice(0, 2), ['python', 'train.py']);
    assert.deepEqual(trainArgv(testSpec(), '/c', { mode: 'disable' }).slice(0, 3), [
      'python',
      '-m',
      'ragen_toy.train',
    ]);
    const spec = ragenSpec();
    spec.trainer.interpreter = '/opt/conda/envs/ragen/bin/python';
    assert.deepEqual(trainArgv(spec, '/c', { mode: 'disable' }).slice(0, 2), [
      '/opt/conda/envs/ragen/bin/python',
      'train.py',
    ]);
  });

  it('refuses a logger verl does not know, naming the field', () => {
    const raw = { ...ragenSpec(), trainer: { ...ragenSpec().trainer, loggers: ['console', 'jsonl'] } };
    const parsed = ExperimentSpecSchema.safeParse(raw);
    assert.equal(parsed.success, false);
    assert.deepEqual(parsed.error?.issues[0]?.path, ['trainer', 'loggers', 1]);
  });
});
