import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trainArgv } from '../../src/domain/entrypoint.js';
import { ExperimentSpecSchema, type ExperimentSpec } from '../../src/domain/experiment.js';
import { RAGEN_BASE_CONFIG, VERL_03_LOGGERS, overrideProblems } from '../fixtures/ragen-config.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testSpec } from '../helpers/specs.js';

/** The overrides of an argv: everything after `--config-name <name>`. */
function overridesOf(argv: string[]): string[] {
  const at = argv.indexOf('--config-name');
  assert.ok(at > 0, `no --config-name in ${argv.join(' ')}`);
  return argv.slice(at + 2);
}

function assertRagenAccepts(argv: string[]): void {
  const problems = overridesOf(argv).flatMap((o) => overrideProblems(o));
  assert.deepEqual(problems, [], argv.join(' '));
}

const ragenSpec = (): ExperimentSpec => {
  const spec = kuberaySpec('/mnt/shared');
  return { ...spec, trainer: { ...spec.trainer, entrypoint: undefined } };
};

describe('train argv against RAGEN base config (fixture from the contract)', () => {
  it('every override of a fresh and a resumed run is a RAGEN key with a value of its type', () => {
    assertRagenAccepts(trainArgv(ragenSpec(), '/mnt/shared/ckpt', { mode: 'disable' }));
    assertRagenAccepts(
      trainArgv(ragenSpec(), '/mnt/shared/ckpt', {
        mode: 'resume_path',
        path: '/mnt/shared/ckpt/global_step_10',
      }),
    );
  });

  it('the fixture refuses what RAGEN refuses (the checker can fail)', () => {
    assert.match(overrideProblems('trainer.no_such_key=1').join(), /not in struct/);
    assert.match(overrideProblems('trainer.total_training_steps=ten').join(), /expected an int/);
    assert.match(overrideProblems('trainer.logger=[console,jsonl]').join(), /unknown entries jsonl/);
    assert.match(overrideProblems('+trainer.nnodes=2').join(), /already at/);
    assert.match(
      overrideProblems("trainer.logger=['console','file']", {
        ...RAGEN_BASE_CONFIG,
        'trainer.logger': { kind: 'list', choices: VERL_03_LOGGERS },
      }).join(),
      /unknown entries file/,
    );
  });

  it('asks verl only for the console logger by default (verl < 0.4 refuses file)', () => {
    const argv = trainArgv(ragenSpec(), '/mnt/shared/ckpt', { mode: 'disable' });
    const old = {
      ...RAGEN_BASE_CONFIG,
      'trainer.logger': { kind: 'list' as const, choices: VERL_03_LOGGERS },
    };
    assert.deepEqual(
      overridesOf(argv).flatMap((o) => overrideProblems(o, old)),
      [],
    );
    assert.ok(argv.includes("trainer.logger=['console']"));
    assert.ok(!argv.some((a) => a.includes('VERL_FILE_LOGGER_PATH')));
  });

  it('asks for the file logger when the spec does (its path travels in the job runtime_env, not the argv)', () => {
    const spec = ragenSpec();
    spec.trainer.loggers = ['console', 'file'];
    const argv = trainArgv(spec, '/mnt/shared/ckpt', { mode: 'disable' });
    assertRagenAccepts(argv);
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
