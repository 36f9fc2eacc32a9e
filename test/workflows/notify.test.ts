import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createNotify } from '../../src/activities/tracking/notify.js';
import { mapFailuresAtBoundary } from '../../src/activities/common/failures.js';
import type { Activities } from '../../src/activities/index.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { permanent } from '../../src/errors/domain-error.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
const receiver = new Receiver();
before(async () => {
  [env] = await Promise.all([timeSkippingEnv(), receiver.start()]);
});
after(async () => {
  await Promise.all([env?.teardown(), receiver.stop()]);
});

function withRealNotify(overrides: Partial<Activities> = {}) {
  return fakeActivities({ notify: mapFailuresAtBoundary({ f: createNotify({}) }).f, ...overrides });
}

async function worker(taskQueue: string, activities: Activities) {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    // No workflow cache: every workflow task replays the whole history (as after a worker restart),
    // and no sticky queue ties the workflow to a worker that has stopped.
    maxCachedWorkflows: 0,
    workflowBundle: await workflowBundle(),
    activities,
  });
}

describe('notifications (local HTTP receiver, time-skipping Temporal, stand-in activities)', () => {
  it(
    'posts one event to each target that asked for it; a 503 is retried with the same idempotency key',
    { timeout: 90_000 },
    async () => {
      receiver.failFirst = 1;
      const spec = testSpec({
        notify: [
          { url: `${receiver.url}/exp-all` },
          { url: `${receiver.url}/exp-failures`, on: ['failed', 'stalled'] },
        ],
      });
      const taskQueue = uniqueId('tq-notify');
      const w = await worker(taskQueue, withRealNotify().activities);
      const workflowId = uniqueId('notify-exp');
      const result = await w.runUntil(
        env.client.workflow.execute('experiment', { taskQueue, workflowId, args: [testInput(spec)] }),
      );
      assert.equal((result as { outcome: string }).outcome, 'succeeded');
      const posts = receiver.posts.filter((p) => p.path === '/exp-all');
      assert.equal(posts.length, 2, 'the 503 was retried once');
      assert.equal(posts[0]?.key, posts[1]?.key, 'a retry carries the same idempotency key');
      const [event, ...more] = receiver.delivered('/exp-all');
      assert.equal(more.length, 0);
      assert.equal(event?.kind, 'experiment');
      assert.equal(event?.id, workflowId);
      assert.equal(event?.outcome, 'succeeded');
      assert.equal(event?.name, spec.name);
      assert.equal(event?.idempotencyKey, posts[0]?.key);
      assert.match(event?.manifest ?? '', /manifest\.json$/);
      assert.match(event?.temporalUi ?? '', new RegExp(`/namespaces/default/workflows/${workflowId}/`));
      assert.match(event?.text ?? '', /experiment \*sokoban-test\* .* succeeded/);
      assert.equal(receiver.delivered('/exp-failures').length, 0, 'that target asked for failures only');
      receiver.failFirst = 0;
    },
  );

  it(
    'a sweep that exhausts its failure budget posts failureBudgetExhausted once',
    { timeout: 90_000 },
    async () => {
      const sweep = seedSweep([1, 2, 3], { failureBudget: 1 });
      sweep.base.notify = [{ url: `${receiver.url}/sweep`, on: ['failureBudgetExhausted'] }];
      const { activities } = withRealNotify({
        preflight: async () => {
          throw permanent(ErrorTypes.PreflightFailed, 'stand-in preflight refuses');
        },
      });
      const taskQueue = uniqueId('tq-notify-sweep');
      const w = await worker(taskQueue, activities);
      await w
        .runUntil(
          env.client.workflow.execute('sweep', {
            taskQueue,
            workflowId: uniqueId('notify-sweep'),
            args: [sweepInput(sweep)],
          }),
        )
        .catch(() => undefined);
      const events = receiver.delivered('/sweep');
      assert.deepEqual(
        events.map((e) => [e.kind, e.outcome]),
        [['sweep', 'failureBudgetExhausted']],
      );
      assert.match(events[0]?.reason ?? '', /failureBudget 1/);
    },
  );
});
