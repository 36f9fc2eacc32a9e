import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadExperimentSpec, parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
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

  it('join.nodeFloorFraction is a fraction strictly between 0 and 1, named when it is not', () => {
    for (const bad of ['0', '1', '1.5']) {
      const issue = issuesOf(`${validSpecYaml()}join:\n  nodeFloorFraction: ${bad}\n`)[0];
      assert.equal(issue?.field, 'join.nodeFloorFraction', JSON.stringify(issue));
    }
    assert.equal(
      parseExperimentSpec(`${validSpecYaml()}join:\n  nodeFloorFraction: 0.25\n`).join.nodeFloorFraction,
      0.25,
    );
  });

  it('the join deadline defaults by backend: 180 s local, 900 s kuberay (image pulls); an explicit one is kept', () => {
    const noJoin = (yaml: string) => yaml.replace(/^  joinSeconds: \d+\n/m, '');
    assert.equal(parseExperimentSpec(noJoin(validSpecYaml())).deadlines.joinSeconds, 180);
    assert.equal(parseExperimentSpec(noJoin(kuberaySpecYaml())).deadlines.joinSeconds, 900);
    assert.equal(parseExperimentSpec(kuberaySpecYaml()).deadlines.joinSeconds, 60);
  });

  it('real-run defaults on kuberay: noProgressSeconds 1800 (local keeps 300 for the toy), firstStepSeconds 3600, checks.allReduceSeconds 180; explicit values kept', () => {
    const bare = (yaml: string) => yaml.replace(/^  (noProgressSeconds|firstStepSeconds): \d+\n/gm, '');
    const kuberay = parseExperimentSpec(bare(kuberaySpecYaml()));
    assert.equal(kuberay.deadlines.noProgressSeconds, 1800);
    assert.equal(kuberay.deadlines.firstStepSeconds, 3600);
    assert.equal(kuberay.checks.allReduceSeconds, 180);
    const local = parseExperimentSpec(bare(validSpecYaml()));
    assert.equal(local.deadlines.noProgressSeconds, 300);
    assert.equal(local.checks.allReduceSeconds, 180);
    const set = parseExperimentSpec(`${bare(kuberaySpecYaml())}checks:\n  allReduceSeconds: 40\n`);
    assert.equal(set.checks.allReduceSeconds, 40);
    assert.match(
      issuesOf(`${kuberaySpecYaml()}checks:\n  allReduceSeconds: 0\n`)[0]?.field ?? '',
      /^checks\.allReduceSeconds$/,
    );
  });

  it('storage.retain defaults on kuberay to the last 2 and the best by in-loop validation (only the last 2 without it); local keeps every checkpoint; an explicit retain wins', () => {
    const testFreq = (yaml: string, n: number) =>
      yaml.includes('testFreq:')
        ? yaml.replace(/^  testFreq: \d+$/m, `  testFreq: ${n}`)
        : yaml.replace(/^  saveFreq: (\d+)$/m, `  saveFreq: $1\n  testFreq: ${n}`);
    assert.deepEqual(parseExperimentSpec(testFreq(kuberaySpecYaml(), 5)).storage.retain, {
      latest: 2,
      best: { count: 1, metric: 'val-env/CoordSokoban/success', mode: 'max' },
    });
    assert.deepEqual(parseExperimentSpec(testFreq(kuberaySpecYaml(), 0)).storage.retain, { latest: 2 });
    assert.equal(parseExperimentSpec(validSpecYaml()).storage.retain, undefined);
    const every = kuberaySpecYaml().replace(/^(  archiveDir: .*)$/m, '$1\n  retain: {every: 1}');
    assert.deepEqual(parseExperimentSpec(every).storage.retain, { every: 1 });
  });

  it('kuberay.securityContext: numeric ids, each field named when wrong', () => {
    const withSc = (sc: string) => `${kuberaySpecYaml()}  securityContext: ${sc}\n`;
    const spec = parseExperimentSpec(withSc('{runAsUser: 1000, runAsGroup: 100, fsGroup: 100}'));
    assert.deepEqual(spec.kuberay?.securityContext, { runAsUser: 1000, runAsGroup: 100, fsGroup: 100 });
    const byName = issuesOf(withSc('{runAsUser: ray}'))[0];
    assert.equal(byName?.field, 'kuberay.securityContext.runAsUser');
    assert.match(byName?.message ?? '', /numeric user id such as 1000/);
    assert.equal(issuesOf(withSc('{fsGroup: -1}'))[0]?.field, 'kuberay.securityContext.fsGroup');
    assert.equal(issuesOf(withSc('{runAsUsr: 1}'))[0]?.field, 'kuberay.securityContext.runAsUsr');
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
