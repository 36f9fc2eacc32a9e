import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripStackPaths, withoutMachinePaths } from '../helpers/stack-paths.js';

describe('stack traces in recorded histories', () => {
  it('cuts each frame to its path inside the checkout', () => {
    const stack = [
      'ApplicationFailure: stand-in trainer exited 1',
      '    at Function.create (/home/dev/clone/node_modules/@temporalio/common/src/failure.ts:228:11)',
      '    at create (/var/tmp/old/src/workflows/experiment.ts:476:27)',
      '    at file:///srv/ci/ragen/test/helpers/fake-activities.ts:9:3',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    ].join('\n');
    assert.equal(
      withoutMachinePaths(stack),
      [
        'ApplicationFailure: stand-in trainer exited 1',
        '    at Function.create (node_modules/@temporalio/common/src/failure.ts:228:11)',
        '    at create (src/workflows/experiment.ts:476:27)',
        '    at test/helpers/fake-activities.ts:9:3',
        '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      ].join('\n'),
    );
  });

  it('leaves a folder named like src inside a segment alone, and the message', () => {
    const stack = 'Error: no file /data/ragen-test/x\n    at f (/opt/my-src/app/src/a.ts:1:1)';
    assert.equal(withoutMachinePaths(stack), 'Error: no file /data/ragen-test/x\n    at f (src/a.ts:1:1)');
  });

  it('rewrites every stackTrace of a history, at any depth, and nothing else', () => {
    const history = {
      events: [
        {
          activityTaskFailedEventAttributes: {
            failure: {
              message: 'at (/abs/src/x.ts:1:1)',
              stackTrace: 'E\n    at f (/abs/src/x.ts:1:1)',
              cause: { stackTrace: 'E\n    at g (/abs/node_modules/y/index.js:2:2)' },
            },
          },
        },
      ],
    };
    stripStackPaths(history);
    const failure = history.events[0]!.activityTaskFailedEventAttributes.failure;
    assert.equal(failure.stackTrace, 'E\n    at f (src/x.ts:1:1)');
    assert.equal(failure.cause.stackTrace, 'E\n    at g (node_modules/y/index.js:2:2)');
    assert.equal(failure.message, 'at (/abs/src/x.ts:1:1)');
  });
});
