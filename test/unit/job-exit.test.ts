import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyJobFailure, diskFullLine } from '../../src/domain/job-exit.js';

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
