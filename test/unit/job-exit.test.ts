import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyJobFailure, diskFullLine } from '../../src/domain/failures/job-exit.js';

describe('job failure types from exit code and log', () => {
  it("maps the payload's documented exit codes", () => {
    assert.equal(classifyJobFailure(2, '').type, 'TrainingConfigInvalid');
    assert.equal(classifyJobFailure(3, '').type, 'TrainingResourceShortfall');
    assert.equal(classifyJobFailure(4, '').type, 'CheckpointUnusable');
    assert.equal(classifyJobFailure(1, '').type, 'TrainingFailed');
    assert.equal(classifyJobFailure(137, 'Killed').type, 'TrainingFailed');
  });

  it("recognises RAGEN's exit-1 config errors and verl's GPU check from the log, also without an exit code (Ray < 2.7)", () => {
    assert.equal(
      classifyJobFailure(undefined, "Key 'trainer.bogus' is not in struct").type,
      'TrainingConfigInvalid',
    );
    assert.equal(
      classifyJobFailure(
        1,
        '  File "train.py", line 40, in add_dependency_and_validate_config\nAssertionError',
      ).type,
      'TrainingConfigInvalid',
    );
    const short = classifyJobFailure(
      1,
      '(TaskRunner pid=9) ValueError: Total available GPUs 4 is less than total desired GPUs 8',
    );
    assert.equal(short.type, 'TrainingResourceShortfall');
    assert.match(short.reason, /Total available GPUs 4/);
  });

  // Real verl 0.6.1 / CPython shapes (ray_trainer.py `_check_resource_available` sums Ray's float
  // GPU counts; CPython's message for a missing script).
  const table: [string, number | undefined, string, string, RegExp][] = [
    [
      "python's can't open file, absolute path",
      2,
      "/usr/bin/python3: can't open file '/workspace/RAGEN/train.py': [Errno 2] No such file or directory",
      'EntrypointNotFound',
      /cannot open \/workspace\/RAGEN\/train\.py .*not in the working directory \/workspace\/RAGEN of the image; set kuberay\.head\.workingDir/,
    ],
    [
      "python's can't open file, relative path (Python 3.8)",
      2,
      "python: can't open file 'train.py': [Errno 2] No such file or directory",
      'EntrypointNotFound',
      /cannot open train\.py .*the job's working directory/,
    ],
    [
      "can't open file in a log but exit 1: not the entrypoint",
      1,
      "subprocess said: python: can't open file 'x.py': [Errno 2] No such file or directory",
      'TrainingFailed',
      /crashed/,
    ],
    [
      "exit 2 without python's message stays a config error",
      2,
      "Could not override 'trainer.bogus'.",
      'TrainingConfigInvalid',
      /Could not override/,
    ],
    [
      "verl's GPU check with a float count",
      1,
      '(TaskRunner pid=12, ip=10.0.0.3) ValueError: Total available GPUs 1.0 is less than total desired GPUs 2',
      'TrainingResourceShortfall',
      /Total available GPUs 1\.0 is less than total desired GPUs 2/,
    ],
    [
      "verl's GPU check with float counts on both sides",
      undefined,
      'ValueError: Total available GPUs 6.0 is less than total desired GPUs 8.0',
      'TrainingResourceShortfall',
      /6\.0/,
    ],
  ];
  for (const [name, exit, log, type, reason] of table)
    it(`table: ${name}`, () => {
      const f = classifyJobFailure(exit, log);
      assert.equal(f.type, type);
      assert.match(f.reason, reason);
    });

  it('names a full disk whatever the exit code', () => {
    assert.equal(
      classifyJobFailure(2, 'OSError: [Errno 28] No space left on device').type,
      'CheckpointDiskFull',
    );
    assert.equal(
      diskFullLine('a\nError: ENOSPC: no space left on device, write\nb'),
      'Error: ENOSPC: no space left on device, write',
    );
    assert.equal(diskFullLine('saved 28 files to /spaces/left'), undefined);
  });
});
