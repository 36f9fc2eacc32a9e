import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadSweepSpec, parseSweepSpec } from '../../src/cli/spec-files/load-sweep.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { tellOf, tpeProbeSets } from '../../src/domain/sweep/sweep-search.js';
import { validSpecYaml } from '../helpers/specs.js';

const indent = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
const tpeYaml = (params: string, trials = 6, parameters = '{}') =>
  `name: tpe\nbase:\n${indent(validSpecYaml())}\nparameters: ${parameters}\n` +
  `search:\n  type: tpe\n  trials: ${trials}\n  seed: 3\n  params:\n${params}\n`;

async function refused(yaml: string): Promise<string> {
  const err = await parseSweepSpec(yaml).then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SpecError, String(err));
  return err.message;
}

describe('sweep spec: search tpe', () => {
  it('loads every parameter type, with the seed and trials', async () => {
    const s = await parseSweepSpec(
      tpeYaml(
        '    algorithm.lr: { logUniform: [1.0e-5, 1.0e-2] }\n' +
          '    x.clip: { uniform: [0.1, 0.3] }\n' +
          '    trainer.seedTrain: { intRange: [1, 9] }\n' +
          '    x.opt: { choice: [adam, sgd, lion] }',
      ),
    );
    assert.equal(s.search?.trials, 6);
    assert.equal(s.search?.seed, 3);
    // The load-time probes: each range's ends and each choice.
    assert.deepEqual(tpeProbeSets(s.search!), [
      { 'algorithm.lr': 1e-5, 'x.clip': 0.1, 'trainer.seedTrain': 1, 'x.opt': 'adam' },
      { 'algorithm.lr': 1e-2, 'x.clip': 0.3, 'trainer.seedTrain': 9, 'x.opt': 'sgd' },
      { 'algorithm.lr': 1e-2, 'x.clip': 0.3, 'trainer.seedTrain': 9, 'x.opt': 'lion' },
    ]);
  });

  it('refuses an unknown type, an empty range, a one-value choice and zero trials, naming the field', async () => {
    assert.match(
      await refused(tpeYaml('    algorithm.lr: { normal: [0, 1] }')),
      /search\.params\.algorithm\.lr: unknown parameter type "normal": give exactly one of choice/,
    );
    assert.match(
      await refused(tpeYaml('    algorithm.lr: { uniform: [0.5, 0.5] }')),
      /search\.params\.algorithm\.lr: the range \[0\.5, 0\.5\] is empty: write \[low, high\] with low below high/,
    );
    assert.match(
      await refused(tpeYaml('    x.opt: { choice: [adam] }')),
      /search\.params\.x\.opt: a choice with one value leaves nothing to search/,
    );
    assert.match(
      await refused(tpeYaml('    x.opt: { choice: [a, b] }', 0)),
      /search\.trials: trials must be at least 1/,
    );
    assert.match(
      await refused(tpeYaml('    x.opt: { choice: [a, b] }', 4, '\n  grid:\n    y: [1, 2]')),
      /parameters: search\.type tpe picks every parameter itself/,
    );
  });

  it('loads the example TPE sweep', async () => {
    const s = await loadSweepSpec('examples/sokoban-tpe-sweep.yaml');
    assert.equal(s.search?.trials, 12);
    assert.deepEqual(Object.keys(s.search?.params ?? {}), ['algorithm.lr', 'algorithm.gamma']);
  });

  it('validates the children at the ends of each range', async () => {
    assert.match(
      await refused(tpeYaml('    trainer.totalTrainingSteps: { intRange: [-2, 4] }')),
      /parameters → base\.trainer\.totalTrainingSteps: .*searched values/,
    );
  });
});

describe('sweep search tpe: what the study is told', () => {
  it('a validated child is complete with its value; a pruned one pruned at its rung; the rest failed', () => {
    assert.deepEqual(tellOf({ outcome: 'succeeded', successRate: 0.4 }), { state: 'complete', value: 0.4 });
    assert.deepEqual(tellOf({ outcome: 'pruned', lastIntermediate: [4, 0.25] }), {
      state: 'pruned',
      step: 4,
      value: 0.25,
    });
    assert.deepEqual(tellOf({ outcome: 'pruned' }), { state: 'pruned' });
    for (const outcome of ['failed', 'cancelled', 'earlyStopped'])
      assert.deepEqual(tellOf({ outcome }), { state: 'fail' });
    assert.deepEqual(tellOf({ outcome: 'succeeded' }), { state: 'fail' }, 'no value: nothing to rank');
  });
});
