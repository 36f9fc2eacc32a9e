import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadExperimentSpec, parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SpecError } from '../../src/domain/spec-error.js';
import { kuberaySpecYaml } from '../helpers/kuberay-specs.js';
import { validSpecYaml } from '../helpers/specs.js';

function issuesOf(yaml: string) {
  try {
    parseExperimentSpec(yaml, 'test.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  assert.fail('the spec was accepted');
}

describe('ExperimentSpec loading', () => {
  it('accepts the embedded default example', async () => {
    const spec = await loadExperimentSpec('examples/sokoban-local.yaml');
    assert.equal(spec.backend, 'local');
    assert.equal(spec.trainer.nnodes * spec.trainer.nGpusPerNode, 2);
    assert.equal(spec.validation.seed, 123);
  });

  it('the join deadline defaults by backend: 180 s local, 900 s kuberay (image pulls); an explicit one is kept', () => {
    const noJoin = (yaml: string) => yaml.replace(/^  joinSeconds: \d+\n/m, '');
    assert.equal(parseExperimentSpec(noJoin(validSpecYaml())).deadlines.joinSeconds, 180);
    assert.equal(parseExperimentSpec(noJoin(kuberaySpecYaml())).deadlines.joinSeconds, 900);
    assert.equal(parseExperimentSpec(kuberaySpecYaml()).deadlines.joinSeconds, 60);
  });

  it('refuses malformed YAML with the line', () => {
    const issues = issuesOf('name: x\ncluster: [unclosed\n');
    assert.match(issues[0]?.message ?? '', /malformed YAML.*line/);
  });

  it('refuses an unknown field, naming it', () => {
    const issues = issuesOf(validSpecYaml().replace('  saveFreq: 10', '  saveFreq: 10\n  savefreq: 10'));
    assert.equal(issues[0]?.field, 'trainer.savefreq');
    assert.match(issues[0]?.message ?? '', /unknown field/);
  });

  it('refuses nnodes x nGpusPerNode that differs from the worker GPUs, with both numbers', () => {
    const issues = issuesOf(validSpecYaml().replace('nnodes: 2', 'nnodes: 3'));
    assert.equal(issues[0]?.field, 'trainer.nnodes');
    assert.match(issues[0]?.message ?? '', /3 x 1 = 3, but the worker groups provide 2 GPUs/);
  });

  it('refuses a per-node GPU shape verl cannot place', () => {
    const yaml = validSpecYaml()
      .replace('nnodes: 2', 'nnodes: 1')
      .replace('nGpusPerNode: 1', 'nGpusPerNode: 2');
    const issues = issuesOf(yaml);
    assert.equal(issues[0]?.field, 'cluster.workerGroups[0].gpusPerWorker');
  });

  it('refuses an image given by tag, saying how to get the digest', () => {
    const issues = issuesOf(`${validSpecYaml()}image: rayproject/ray:2.60.0-gpu\n`);
    assert.equal(issues[0]?.field, 'image');
    assert.match(issues[0]?.message ?? '', /not pinned by an immutable digest.*@sha256:<digest>/);
  });

  it('accepts an image pinned by digest, keeping a tag as a record', () => {
    const spec = parseExperimentSpec(
      `${validSpecYaml()}image: docker.io/rayproject/ray:2.60.0@sha256:${'a'.repeat(64)}\n`,
    );
    assert.ok(spec.image?.endsWith('a'.repeat(64)));
  });

  it('refuses a relative storage path', () => {
    const issues = issuesOf(
      validSpecYaml().replace('checkpointDir: /tmp/ragen-test/checkpoints', 'checkpointDir: checkpoints'),
    );
    assert.equal(issues[0]?.field, 'storage.checkpointDir');
    assert.match(issues[0]?.message ?? '', /absolute path/);
  });

  it('names a missing required field', () => {
    const issues = issuesOf(validSpecYaml().replace('rayVersion: 2.60.0\n', ''));
    assert.deepEqual(
      issues.map((i) => i.field),
      ['rayVersion'],
    );
    assert.match(issues[0]?.message ?? '', /required/);
  });
});
