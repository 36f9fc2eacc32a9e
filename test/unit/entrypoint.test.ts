import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { allReduceArgv, shellQuote, trainArgv } from '../../src/domain/ragen/entrypoint.js';
import { clusterName, submissionId } from '../../src/domain/spec/naming.js';
import { testSpec } from '../helpers/specs.js';

describe('entrypoint argv', () => {
  it('passes RAGEN overrides and an explicit resume path, never auto', () => {
    const fresh = trainArgv(testSpec(), '/ckpt/x', { mode: 'disable' });
    assert.ok(fresh.includes('trainer.resume_mode=disable'));
    assert.ok(fresh.includes('trainer.default_local_dir=/ckpt/x'));
    assert.ok(fresh.includes('++ray_kwargs.ray_init.address=auto'));
    const resumed = trainArgv(testSpec(), '/ckpt/x', { mode: 'resume_path', path: '/ckpt/x/global_step_10' });
    assert.ok(resumed.includes('trainer.resume_mode=resume_path'));
    assert.ok(resumed.includes('trainer.resume_from_path=/ckpt/x/global_step_10'));
    assert.ok(!resumed.some((a) => a.includes('resume_mode=auto')));
  });

  it("gives the all-reduce probe the spec's per-node floor, 0.5 when the spec (or an older workflow's) has none", () => {
    const floorOf = (argv: string[]) => argv[argv.indexOf('--node-floor-fraction') + 1];
    const spec = testSpec();
    assert.equal(floorOf(allReduceArgv(spec, 180, '/o.json')), '0.5');
    assert.equal(
      floorOf(allReduceArgv({ ...spec, join: { ...spec.join, nodeFloorFraction: 0.3 } }, 180, '/o.json')),
      '0.3',
    );
  });

  it('quotes each argument so a shell sees exactly the same argv', () => {
    const argv = [
      'printf',
      '%s\\n',
      "it's",
      'a b',
      '$(rm -rf /)',
      "trainer.logger=['console','file']",
      '`x`;&|',
    ];
    const out = execFileSync('/bin/sh', ['-c', shellQuote(argv)], { encoding: 'utf8' });
    assert.deepEqual(out.trimEnd().split('\n'), argv.slice(2));
  });

  it('derives DNS-safe cluster names and stable submission ids from the workflow id', () => {
    const name = clusterName('Sokoban_Local', 'experiment-sokoban-1234', 2);
    assert.match(name, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
    assert.ok(name.length <= 63 && name.endsWith('-a2'));
    assert.equal(clusterName('s', 'wf', 0), clusterName('s', 'wf', 0));
    assert.notEqual(clusterName('s', 'wf-1', 0), clusterName('s', 'wf-2', 0));
    assert.equal(submissionId(name, 'train'), `${name}-train-0`);
  });
});
