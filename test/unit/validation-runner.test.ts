import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { readTrainerValidation, validationTagsIn } from '../../src/activities/validate/validation-log.js';
import { loadConfig } from '../../src/config/config.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { trainingSeeds, validationSeeds } from '../../src/domain/validate/seed-ranges.js';
import { overridesOf } from '../../src/domain/ragen/hydra-overrides.js';
import { trainerValidationArgv } from '../../src/domain/validate/validation-argv.js';
import { validationRunnerOf } from '../../src/domain/validate/validation-runner.js';
import { validSpecYaml } from '../helpers/specs.js';
import { defaultEntrypoint } from '../../src/domain/ragen/entrypoint.js';

const run = promisify(execFile);

function issuesOf(yaml: string) {
  try {
    parseExperimentSpec(yaml, 'test.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  assert.fail('the spec was accepted');
}

const withValidation = (lines: string) =>
  validSpecYaml().replace(
    'validation:\n  episodes: 32\n  seed: 5000\n',
    `validation:\n  episodes: 32\n${lines}`,
  );

describe("reading the trainer's validation console line", () => {
  const logs = [
    'Total training steps: 20',
    '(TaskRunner pid=4242, ip=10.0.0.3) step:20 - val-env/CoordSokoban/success:np.float64(0.71875) - val-env/CoordSokoban/pass@1:0.71875 - val-env/CoordSokoban/num_actions:3.5 - val-core/unknown/reward/mean@32:6.1 - timing_s/testing:1.2',
    'Final validation metrics: {...}',
  ].join('\n');

  it('takes success, pass@k and the val metrics of the val-env/<tag> line, with a Ray prefix and numpy 2 values', () => {
    const read = readTrainerValidation(logs, 'CoordSokoban');
    assert.deepEqual(read, {
      step: 20,
      success: 0.71875,
      passAtK: { '1': 0.71875 },
      metrics: {
        'val-env/CoordSokoban/success': 0.71875,
        'val-env/CoordSokoban/pass@1': 0.71875,
        'val-env/CoordSokoban/num_actions': 3.5,
        'val-core/unknown/reward/mean@32': 6.1,
      },
    });
  });

  it('takes the last validation line, ignores training lines and other tags', () => {
    const more = `${logs}\nstep:21 - train/CoordSokoban/success:0.9\nstep:22 - val-env/CoordSokoban/success:0.8 - val-env/SimpleSokoban/success:0.1`;
    assert.equal(readTrainerValidation(more, 'CoordSokoban')?.step, 22);
    assert.equal(readTrainerValidation(more, 'SimpleSokoban')?.success, 0.1);
    assert.deepEqual(validationTagsIn(more).sort(), ['CoordSokoban', 'SimpleSokoban']);
  });

  it('is undefined when the tag never printed success', () => {
    assert.equal(readTrainerValidation(logs, 'LargerSokoban'), undefined);
    assert.equal(readTrainerValidation('step:3 - train/CoordSokoban/success:1', 'CoordSokoban'), undefined);
  });
});

describe('trainer validation argv', () => {
  const spec = parseExperimentSpec(
    withValidation('  seed: 5000\n  runner: trainer\n').replace(
      '  saveFreq: 10\n',
      '  saveFreq: 10\n  overrides:\n    es_manager.val.env_groups: 512\n    trainer.val_before_train: false\n    algorithm.lr: 0.1\n',
    ),
  );
  const argv = trainerValidationArgv(spec, '/ckpt/run/global_step_20', '/archive/run/validation-trainer');
  const values = overridesOf(argv);

  it("is the training command turned into verl's val_only run from the checkpoint", () => {
    assert.deepEqual(argv.slice(0, 5), [
      ...(spec.trainer.entrypoint ?? defaultEntrypoint(spec.backend)),
      '--config-name',
      spec.trainer.configName,
    ]);
    assert.equal(values.get('trainer.val_only'), 'True');
    // `++`: added where an older verl (0.2, RAGEN-AI 5eb79b8) has no such key, else overridden.
    assert.ok(argv.includes('++trainer.val_only=True') && argv.includes('++trainer.val_before_train=True'));
    assert.equal(
      values.get('trainer.val_before_train'),
      'True',
      'verl returns after val_only only when val_before_train is set',
    );
    assert.equal(values.get('trainer.resume_mode'), 'resume_path');
    assert.equal(values.get('trainer.resume_from_path'), '/ckpt/run/global_step_20');
    assert.equal(values.get('trainer.default_local_dir'), '/archive/run/validation-trainer');
    assert.equal(values.get('seed.val'), '5000');
    assert.equal(values.get('es_manager.val.env_groups'), '32');
    assert.equal(values.get('es_manager.val.group_size'), '1');
    assert.equal(values.get('es_manager.val.env_configs.tags'), '[CoordSokoban]');
    assert.equal(values.get('es_manager.val.env_configs.n_groups'), '[32]');
    assert.equal(values.get('algorithm.lr'), '0.1', 'training overrides stay');
  });

  it('gives every key one value: the runner replaces the same keys of the training command', () => {
    const keys = argv
      .filter((a) => a.includes('=') && !a.startsWith('-'))
      .map((a) => a.slice(0, a.indexOf('=')).replace(/^\++/, ''));
    assert.deepEqual(
      keys.filter((k, i) => keys.indexOf(k) !== i),
      [],
    );
  });

  it('is accepted by the payload, which parses it like RAGEN would (types, known keys, n_groups adding up)', async () => {
    const script =
      'import json, sys\nfrom ragen_toy.config.overrides import parse_command_line\nc = parse_command_line(sys.argv[1:])\nprint(json.dumps({k: c[k] for k in ("trainer.val_only", "trainer.val_before_train", "seed.val", "es_manager.val.env_groups", "es_manager.val.env_configs.n_groups", "trainer.resume_from_path")}))';
    const { stdout } = await run(loadConfig().python, ['-c', script, ...argv.slice(3)]);
    assert.deepEqual(JSON.parse(stdout), {
      'trainer.val_only': true,
      'trainer.val_before_train': true,
      'seed.val': 5000,
      'es_manager.val.env_groups': 32,
      'es_manager.val.env_configs.n_groups': [32],
      'trainer.resume_from_path': '/ckpt/run/global_step_20',
    });
  });
});

describe('validation runner and seed ranges in the spec', () => {
  it('defaults to the payload runner locally and the trainer on kuberay', () => {
    const spec = parseExperimentSpec(validSpecYaml());
    assert.equal(spec.validation.runner, undefined);
    assert.equal(spec.validation.envTag, 'CoordSokoban');
    assert.equal(validationRunnerOf(spec), 'payload');
    assert.equal(validationRunnerOf({ ...spec, backend: 'kuberay' }), 'trainer');
    assert.equal(validationRunnerOf(parseExperimentSpec(withValidation('  runner: trainer\n'))), 'trainer');
  });

  it('refuses an unknown runner', () => {
    const issues = issuesOf(withValidation('  runner: eval\n'));
    assert.equal(issues[0]?.field, 'validation.runner');
  });

  it('refuses the payload runner where the entrypoint is not the payload, naming the fix', () => {
    const yaml = withValidation('  runner: payload\n').replace(
      '  saveFreq: 10\n',
      '  saveFreq: 10\n  entrypoint: [python, train.py]\n',
    );
    const issues = issuesOf(yaml);
    assert.equal(issues[0]?.field, 'validation.runner');
    assert.match(issues[0]?.message ?? '', /python train\.py.*set validation\.runner: trainer/);
  });

  it('refuses the payload runner with an env tag the toy does not play', () => {
    const issues = issuesOf(withValidation('  envTag: SimpleSokoban\n'));
    assert.equal(issues[0]?.field, 'validation.envTag');
    assert.match(issues[0]?.message ?? '', /CoordSokoban only.*validation\.runner: trainer/);
    assert.equal(
      validationRunnerOf(parseExperimentSpec(withValidation('  envTag: SimpleSokoban\n  runner: trainer\n'))),
      'trainer',
    );
  });

  it('computes the seed ranges as RAGEN walks them (env_groups per step, from the overrides or 8)', () => {
    const spec = parseExperimentSpec(validSpecYaml());
    assert.deepEqual(trainingSeeds(spec), { first: 10000, last: 10000 + 20 * 8 - 1 });
    assert.deepEqual(validationSeeds(spec), { first: 5000, last: 5031 });
    const wider = { ...spec, trainer: { ...spec.trainer, overrides: { 'es_manager.train.env_groups': 16 } } };
    assert.deepEqual(trainingSeeds(wider), { first: 10000, last: 10000 + 20 * 16 - 1 });
  });

  it('refuses overlapping training and validation seeds, naming both ranges and the fix', () => {
    const issues = issuesOf(withValidation('  seed: 10100\n'));
    assert.equal(issues[0]?.field, 'validation.seed');
    const message = issues[0]?.message ?? '';
    assert.match(
      message,
      /validation seeds 10100\.\.10131 \(validation\.seed=10100, validation\.episodes=32\)/,
    );
    assert.match(
      message,
      /training seeds 10000\.\.10159 \(trainer\.seedTrain=10000 \+ trainer\.totalTrainingSteps=20 x es_manager\.train\.env_groups=8\)/,
    );
    assert.match(
      message,
      /Set validation\.seed to 10160 or above \(or to 9968 or below\), or trainer\.seedTrain to 10132 or above/,
    );
  });

  it('accepts ranges that touch without overlapping', () => {
    assert.equal(parseExperimentSpec(withValidation('  seed: 10160\n')).validation.seed, 10160);
    assert.equal(parseExperimentSpec(withValidation('  seed: 9968\n')).validation.seed, 9968);
  });
});
