import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadSweepSpec, parseSweepSpec } from '../../src/cli/spec-files/load-sweep.js';
import { shortHash } from '../../src/domain/spec/naming.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import {
  applyParams,
  canonicalParams,
  childWorkflowId,
  expandSweep,
  seededRandom,
} from '../../src/domain/sweep/sweep-expand.js';
import { rankChildren, sweepCsv } from '../../src/domain/sweep/sweep-results.js';
import type { ChildOutcome } from '../../src/domain/sweep/sweep.js';
import { testSpec, validSpecYaml } from '../helpers/specs.js';

const indent = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
const sweepYaml = (parameters: string, extra = '') =>
  `name: seeds\nbase:\n${indent(validSpecYaml())}\nparameters:\n${parameters}\n${extra}`;

async function refused(yaml: string): Promise<string> {
  const err = await parseSweepSpec(yaml).then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SpecError, String(err));
  return err.message;
}

describe('sweep spec: expansion', () => {
  it('expands a grid as the cartesian product, last key fastest, with defaults', async () => {
    const s = await parseSweepSpec(
      sweepYaml('  grid:\n    trainer.seedTrain: [1, 2]\n    algorithm.lr: [0.1, 0.2, 0.3]'),
    );
    assert.equal(s.concurrency, 1);
    assert.deepEqual(s.objective, { metric: 'validation.successRate', direction: 'max' });
    assert.equal(s.failureBudget, undefined);
    const sets = expandSweep(s);
    assert.equal(sets.length, 6);
    assert.deepEqual(sets[0], { 'trainer.seedTrain': 1, 'algorithm.lr': 0.1 });
    assert.deepEqual(sets[1], { 'trainer.seedTrain': 1, 'algorithm.lr': 0.2 });
    assert.deepEqual(sets[5], { 'trainer.seedTrain': 2, 'algorithm.lr': 0.3 });
  });

  it('drops duplicate parameter sets, keeping the first position', async () => {
    const s = await parseSweepSpec(sweepYaml('  grid:\n    trainer.seedTrain: [1, 2, 1, 2, 3]'));
    assert.deepEqual(
      expandSweep(s).map((p) => p['trainer.seedTrain']),
      [1, 2, 3],
    );
    const r = await parseSweepSpec(
      sweepYaml(
        '  random:\n    seed: 1\n    count: 50\n    params:\n      trainer.seedTrain: { choice: [7, 8] }',
      ),
    );
    assert.deepEqual(
      expandSweep(r)
        .map((p) => p['trainer.seedTrain'])
        .sort(),
      [7, 8],
      'random collisions are deduplicated too',
    );
  });

  it('draws random samples from a seeded PRNG: same seed, same samples; other seed, other samples', async () => {
    const yaml = (seed: number) =>
      sweepYaml(
        `  grid:\n    validation.seed: [5000, 6000]\n  random:\n    seed: ${seed}\n    count: 4\n    params:\n      algorithm.lr: { logUniform: [0.0001, 0.1] }\n      trainer.seedTrain: { intRange: [0, 1000] }\n      algorithm.gamma: { uniform: [0.9, 0.99] }`,
      );
    const a = expandSweep(await parseSweepSpec(yaml(7)));
    const b = expandSweep(await parseSweepSpec(yaml(7)));
    const c = expandSweep(await parseSweepSpec(yaml(8)));
    assert.equal(a.length, 8, 'grid x random: 2 x 4');
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    for (const p of a) {
      const lr = p['algorithm.lr'] as number;
      const seed = p['trainer.seedTrain'] as number;
      const gamma = p['algorithm.gamma'] as number;
      assert.ok(lr >= 0.0001 && lr <= 0.1, `lr ${lr}`);
      assert.ok(Number.isInteger(seed) && seed >= 0 && seed <= 1000, `seed ${seed}`);
      assert.ok(gamma >= 0.9 && gamma <= 0.99, `gamma ${gamma}`);
    }
    // The same 4 samples are combined with each grid point.
    assert.deepEqual(
      a.slice(0, 4).map((p) => p['algorithm.lr']),
      a.slice(4).map((p) => p['algorithm.lr']),
    );
    const next = seededRandom(42);
    const draws = Array.from({ length: 1000 }, next);
    assert.ok(draws.every((u) => u >= 0 && u < 1));
    assert.ok(Math.abs(draws.reduce((x, y) => x + y, 0) / 1000 - 0.5) < 0.05, 'roughly uniform');
  });

  it('gives each child a deterministic id from the sweep id, its index and a hash of its parameters', () => {
    const id = childWorkflowId('sweep-x', 3, { b: 2, a: 'x' });
    assert.equal(id, childWorkflowId('sweep-x', 3, { a: 'x', b: 2 }), 'key order does not matter');
    assert.equal(id, `sweep-x-3-${shortHash(canonicalParams({ a: 'x', b: 2 }))}`);
    assert.match(id, /^sweep-x-3-[0-9a-f]{8}$/);
    assert.notEqual(id, childWorkflowId('sweep-x', 3, { a: 'x', b: 3 }));
  });

  it('applies spec-field keys to the spec and every other key as a trainer override', () => {
    const r = applyParams(testSpec(), {
      'trainer.seedTrain': 5,
      'validation.seed': 999,
      'algorithm.lr': 0.01,
      'trainer.overrides.env.max_steps': 9,
    });
    assert.ok(r.ok);
    assert.equal(r.spec.trainer.seedTrain, 5);
    assert.equal(r.spec.validation.seed, 999);
    assert.deepEqual(r.spec.trainer.overrides, { 'algorithm.lr': 0.01, 'env.max_steps': 9 });
  });
});

describe('sweep spec: bad input is refused with the field and the fix', () => {
  it('refuses a misspelt spec field, a wrong type, a fixed section, an empty sweep and a reversed range', async () => {
    assert.match(
      await refused(sweepYaml('  grid:\n    trainer.seedTrian: [1]')),
      /trainer\.seedTrian.*unknown field/,
    );
    assert.match(
      await refused(sweepYaml('  grid:\n    trainer.totalTrainingSteps: ["many"]')),
      /base\.trainer\.totalTrainingSteps/,
    );
    assert.match(
      await refused(sweepYaml('  grid:\n    storage.archiveDir: [/a, /b]')),
      /'storage' is fixed by the base experiment/,
    );
    assert.match(await refused(sweepYaml('  grid: {}')), /parameters: nothing to sweep/);
    assert.match(
      await refused(
        sweepYaml(
          '  random:\n    seed: 1\n    count: 2\n    params:\n      algorithm.lr: { uniform: [1, 0] }',
        ),
      ),
      /reversed; write \[low, high\]/,
    );
    assert.match(
      await refused(sweepYaml('  grid:\n    algorithm.lr: [1]', 'concurrency: 0\n')),
      /concurrency/,
    );
    assert.match(
      await refused(sweepYaml('  grid:\n    algorithm.lr: [1]', 'parallel: 2\n')),
      /parallel: unknown field/,
    );
    assert.match(
      await refused(
        sweepYaml(
          '  random:\n    seed: 1\n    count: 4000\n    params:\n      algorithm.lr: { uniform: [0, 1] }',
        ),
      ),
      /4000 children planned; at most 3000/,
    );
  });

  it('loads base from a path relative to the sweep file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sweep-spec-'));
    await writeFile(join(dir, 'base.yaml'), validSpecYaml());
    await writeFile(
      join(dir, 'sweep.yaml'),
      'name: rel\nbase: base.yaml\nparameters:\n  grid:\n    trainer.seedTrain: [1, 2]\nconcurrency: 2\nfailureBudget: 1\n',
    );
    const s = await loadSweepSpec(join(dir, 'sweep.yaml'));
    assert.equal(s.base.name, 'sokoban-test');
    assert.equal(s.failureBudget, 1);
    await writeFile(
      join(dir, 'missing.yaml'),
      'name: rel\nbase: nope.yaml\nparameters:\n  grid:\n    trainer.seedTrain: [1]\n',
    );
    await assert.rejects(loadSweepSpec(join(dir, 'missing.yaml')), /base: cannot read the base experiment/);
  });

  it('loads the example sweep', async () => {
    const s = await loadSweepSpec('examples/sokoban-sweep.yaml');
    assert.ok(expandSweep(s).length >= 2);
  });
});

describe('sweep results: ranking and CSV', () => {
  const child = (
    index: number,
    successRate: number | undefined,
    outcome: ChildOutcome['outcome'] = 'succeeded',
  ): ChildOutcome => ({ index, workflowId: `s-${index}`, outcome, successRate });
  const children = [
    child(0, 0.5),
    child(1, undefined, 'failed'),
    child(2, 0.9),
    child(3, 0.5),
    child(4, 0.1),
  ];

  it('ranks by the objective (max or min), ties by index, children without a value last', () => {
    const max = rankChildren(children, (i) => ({ i }), {
      metric: 'validation.successRate',
      direction: 'max',
    });
    assert.deepEqual(
      max.map((r) => r.index),
      [2, 0, 3, 4, 1],
    );
    assert.deepEqual(
      max.map((r) => r.rank),
      [1, 2, 3, 4, undefined],
    );
    const min = rankChildren(children, (i) => ({ i }), {
      metric: 'validation.successRate',
      direction: 'min',
    });
    assert.deepEqual(
      min.map((r) => r.index),
      [4, 0, 3, 2, 1],
    );
  });

  it('writes a CSV with one column per parameter, quoting what needs it', () => {
    const rows = rankChildren(
      [child(0, 0.5), { ...child(1, undefined, 'failed'), error: 'boom, "bad"' }],
      (i) => ({ 'algorithm.lr': i / 10 }),
      { metric: 'validation.successRate', direction: 'max' },
    );
    const lines = sweepCsv(rows).trim().split('\n');
    assert.equal(
      lines[0],
      'rank,index,outcome,validation_success_rate,algorithm.lr,workflow_id,manifest_path,error',
    );
    assert.equal(lines[1], '1,0,succeeded,0.5,0,s-0,,');
    assert.equal(lines[2], ',1,failed,,0.1,s-1,,"boom, ""bad"""');
  });
});
