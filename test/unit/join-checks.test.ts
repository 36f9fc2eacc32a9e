import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allReduceArgv } from '../../src/domain/ragen/entrypoint.js';
import { environmentProbeArgv } from '../../src/domain/join/environment-probe.js';
import { joinChecksArgv } from '../../src/domain/join/join-checks.js';
import { testSpec } from '../helpers/specs.js';

describe('the checks after join as one Ray job', () => {
  it("runs join_checks with the probe's arguments, the separator, then the all-reduce's, on the probes' interpreter", () => {
    const spec = testSpec();
    spec.trainer.interpreter = '/opt/venv/bin/python';
    const environment = environmentProbeArgv(spec, '/ckpt', '/run/env.json');
    const allReduce = allReduceArgv(spec, 60, '/run/allreduce.json');
    const argv = joinChecksArgv(environment, allReduce);
    assert.deepEqual(argv.slice(0, 3), ['/opt/venv/bin/python', '-m', 'ragen_probes.join_checks']);
    const split = argv.indexOf('--then-allreduce');
    assert.deepEqual(argv.slice(3, split), environment.slice(3));
    assert.deepEqual(argv.slice(split + 1), allReduce.slice(3));
  });

  it('refuses an argv that is not the probe it names', () => {
    assert.throws(
      () => joinChecksArgv(['python', 'train.py'], allReduceArgv(testSpec(), 60, '/x')),
      /not an argv of python -m ragen_probes.environment/,
    );
  });
});
