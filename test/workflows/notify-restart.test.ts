/**
 * No duplicate notification after a worker restart (issue 17): the notify activity's result is in
 * the workflow history, so a new worker that replays the workflow does not post again. Real dev
 * server (a restart there is a real replay by a worker with an empty cache), stand-in trainer and
 * storage, the real notify activity posting to a local receiver that counts every POST (no dedup).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { mapFailuresAtBoundary } from '../../src/activities/common/failures.js';
import { createNotify } from '../../src/activities/tracking/notify.js';
import type { CampaignInput, CampaignProgress, CampaignResult } from '../../src/domain/campaign/campaign.js';
import type { campaign } from '../../src/workflows/campaign.js';
import { pauseUpdate, resumeUpdate } from '../../src/workflows/campaign-definitions.js';
import { stopAtCheckpointPendingQuery } from '../../src/workflows/experiment-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { fakeCampaignWorld } from '../helpers/fake-campaign-world.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { StepGate } from '../helpers/step-gate.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
const receiver = new Receiver();
before(async () => {
  [env] = await Promise.all([devServerEnv(), receiver.start()]);
});
after(async () => {
  await Promise.all([env?.teardown(), receiver.stop()]);
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 60): Promise<T> {
  for (let i = 0; i < seconds * 10; i++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('notifications across a worker restart (real dev server, stand-in trainer)', () => {
  it(
    'a campaign paused, its worker restarted, then resumed: each event is posted once',
    { timeout: 120_000 },
    async () => {
      // Lockstep: the trainer waits before step 6 until the attempt holds the pause, then trains to
      // the next checkpoint (10) and waits there for the pause's cancel.
      const gate = new StepGate(5);
      const world = fakeCampaignWorld(() => env.client, { gate });
      const notifiedBy: string[] = [];
      const notify = mapFailuresAtBoundary({ f: createNotify({}) }).f;
      const workerNamed = async (name: string, taskQueue: string) =>
        Worker.create({
          connection: env.nativeConnection,
          taskQueue,
          workflowBundle: await workflowBundle(),
          // The first worker's sticky queue is given up quickly, so the second gets the tasks soon.
          stickyQueueScheduleToStartTimeout: '1s',
          activities: fakeActivities({
            ...world.overrides,
            notify: async (input) => {
              notifiedBy.push(`${name}:${input.draft.event}`);
              return notify(input);
            },
          }).activities,
        });

      const spec = testSpec();
      spec.trainer.totalTrainingSteps = 20;
      spec.trainer.saveFreq = 5;
      spec.notify = [{ url: `${receiver.url}/restart`, on: ['paused', 'succeeded'] }];
      const input: CampaignInput = {
        spec,
        budgets: {
          maxAttempts: 4,
          maxAttemptsWithoutNewCheckpoint: 2,
          historyEventsBeforeContinueAsNew: 2000,
        },
        provenance: testInput().provenance,
      };
      const taskQueue = uniqueId('tq-notify-restart');
      const workflowId = uniqueId('notify-restart');

      // Worker 1: the campaign trains, is paused, posts `paused` and waits for a resume.
      const first = await workerNamed('worker-1', taskQueue);
      const firstRun = first.run();
      const handle = await env.client.workflow.start<typeof campaign>('campaign', {
        taskQueue,
        workflowId,
        args: [input],
      });
      await until('checkpoint 5', async () => {
        const p = await handle.query<CampaignProgress>('progress');
        return p.lastCheckpointStep >= 5 ? p : undefined;
      });
      await handle.executeUpdate(pauseUpdate);
      await until('the attempt to hold the pause', () =>
        env.client.workflow
          .getHandle(`${workflowId}-a1`)
          .query(stopAtCheckpointPendingQuery)
          .then((held) => held || undefined),
      );
      gate.releaseTo(10);
      await until('the paused post', async () =>
        receiver.delivered('/restart').length === 1 ? true : undefined,
      );
      // The notify activity's completion is in the history before the worker goes.
      await until('notify completed in the history', async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        const notifyScheduled = events
          .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'notify')
          .map((e) => String(e.eventId));
        const done = events.some((e) =>
          notifyScheduled.includes(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
        );
        return done ? true : undefined;
      });
      // The restart: worker 1 stops; worker 2 (an empty cache) replays the whole history.
      first.shutdown();
      await firstRun;
      const second = await workerNamed('worker-2', taskQueue);
      gate.releaseTo(Infinity);
      const result = (await second.runUntil(async () => {
        await handle.executeUpdate(resumeUpdate);
        return handle.result();
      })) as CampaignResult;

      assert.equal(result.outcome, 'succeeded', JSON.stringify(result));
      const posts = receiver.posts.filter((p) => p.path === '/restart');
      assert.deepEqual(
        posts.map((p) => p.event.outcome),
        ['paused', 'succeeded'],
        'every POST counted: paused once, succeeded once',
      );
      assert.deepEqual(
        notifiedBy,
        ['worker-1:paused', 'worker-2:succeeded'],
        'the replay did not run notify again',
      );
      assert.notEqual(posts[0]?.key, posts[1]?.key);
      assert.ok(posts.every((p) => p.key?.startsWith(`${workflowId}/`)));
    },
  );
});
