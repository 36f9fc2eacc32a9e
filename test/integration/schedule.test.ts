import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ScheduleDescription } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createSchedule, parseScheduleRequest, triggerSchedule } from '../../src/cli/schedule.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { createNotify } from '../../src/activities/tracking/notify.js';
import { mapFailuresAtBoundary } from '../../src/activities/common/failures.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { testInput, testSpec, validSpecYaml } from '../helpers/specs.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

const run = promisify(execFile);
const FAILING_SEED = 666;

let env: TestWorkflowEnvironment;
let storage: string;
const receiver = new Receiver();
before(async () => {
  [env] = await Promise.all([devServerEnv(), receiver.start()]);
  storage = await mkdtemp(join(tmpdir(), 'ragen-schedule-'));
});
after(async () => {
  await Promise.all([env?.teardown(), receiver.stop()]);
});

/**
 * The scheduled workflows are the real experiment and sweep workflows on the real dev server;
 * their activities are stand-ins (no Ray): training lasts until the test releases it, so a run
 * overlaps the next fires for as long as the test needs, and fails for one seed so a sweep can fail.
 */
let trainingReleased = false;
function standInActivities() {
  return fakeActivities({
    train: async ({ spec }) => {
      if (spec.trainer.seedTrain === FAILING_SEED)
        throw ApplicationFailure.create({
          type: ErrorTypes.TrainingFailed,
          message: 'stand-in failure',
          nonRetryable: true,
        });
      const ctx = Context.current();
      while (!trainingReleased) {
        ctx.heartbeat();
        await ctx.sleep(200);
      }
      return {
        finalStep: spec.trainer.totalTrainingSteps,
        lastCheckpointStep: spec.trainer.totalTrainingSteps,
        lastMetrics: {},
        entrypoint: [],
      };
    },
  }).activities;
}

async function waitFor(
  what: string,
  id: string,
  ok: (d: ScheduleDescription) => boolean,
  seconds = 30,
): Promise<ScheduleDescription> {
  const handle = env.client.schedule.getHandle(id);
  for (let i = 0; i < seconds * 4; i++) {
    const d = await handle.describe();
    if (ok(d)) return d;
    await sleep(250);
  }
  assert.fail(
    `schedule ${id}: timed out waiting for ${what}: ${JSON.stringify((await handle.describe()).info)}`,
  );
}

describe('schedules on the real dev server (stand-in activities)', () => {
  it('fires on a short interval, and overlap skip keeps a second run from starting while one runs', async () => {
    const taskQueue = uniqueId('sched');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: standInActivities(),
    });
    const scheduleId = uniqueId('every-2s');
    await worker.runUntil(async () => {
      await createSchedule(
        env.client,
        parseScheduleRequest({ scheduleId, every: '2s' }),
        { kind: 'experiment', input: testInput(testSpec({}, storage)) },
        taskQueue,
      );
      const first = await waitFor('the first fire', scheduleId, (d) => d.info.numActionsTaken >= 1);
      assert.equal(first.policies.overlap, 'SKIP');
      assert.equal(first.policies.catchupWindow, 60_000);
      assert.equal(first.policies.pauseOnFailure, true);
      // While the first run trains, the fires every 2 s are skipped.
      const skipped = await waitFor(
        'skipped fires',
        scheduleId,
        (d) => d.info.numActionsSkippedOverlap >= 2,
        20,
      );
      assert.equal(skipped.info.numActionsTaken, 1, 'no second run started while one was running');
      assert.equal(skipped.info.runningActions.length, 1);
      await triggerSchedule(env.client, scheduleId);
      const afterTrigger = await env.client.schedule.getHandle(scheduleId).describe();
      assert.equal(
        afterTrigger.info.runningActions.length,
        1,
        'a manual trigger obeys the schedule overlap policy too',
      );
      const runningId = afterTrigger.info.runningActions[0]?.workflow.workflowId ?? '';
      assert.match(runningId, /^experiment-sokoban-test-/);

      const cli = await run('npx', ['tsx', 'src/cli/main.ts', 'schedule', 'describe', scheduleId], {
        env: { ...process.env, TEMPORAL_ADDRESS: env.address },
      });
      assert.match(cli.stdout, /overlap SKIP, catch-up window 60 s, pause on failure true/);
      assert.match(cli.stdout, /1 taken, \d+ skipped \(overlap\), 1 running/);

      const handle = env.client.schedule.getHandle(scheduleId);
      await handle.pause('test');
      assert.equal((await handle.describe()).state.paused, true);
      trainingReleased = true;
      const result = await env.client.workflow.getHandle(runningId).result();
      assert.equal(result.outcome, 'succeeded');
      await handle.delete();
    });
  });

  it('pauses a sweep schedule after a failed sweep (pauseOnFailure), and notifies the pause once', async () => {
    const taskQueue = uniqueId('sched-fail');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: { ...standInActivities(), notify: mapFailuresAtBoundary({ f: createNotify({}) }).f },
    });
    const scheduleId = uniqueId('nightly');
    const input = sweepInput(seedSweep([FAILING_SEED, 1], { failureBudget: 1 }, storage));
    input.sweep.base.notify = [{ url: `${receiver.url}/pause`, on: ['paused'] }];
    await worker.runUntil(async () => {
      await createSchedule(
        env.client,
        parseScheduleRequest({ scheduleId, cron: '0 2 * * *' }),
        { kind: 'sweep', input },
        taskQueue,
      );
      await triggerSchedule(env.client, scheduleId);
      const paused = await waitFor('the pause after the failed sweep', scheduleId, (d) => d.state.paused, 60);
      const sweepId = paused.info.recentActions[0]?.action.workflow.workflowId ?? '';
      assert.match(sweepId, /^sweep-seed-sweep-/);
      assert.equal((await env.client.workflow.getHandle(sweepId).describe()).status.name, 'FAILED');
      const posts = receiver.posts.filter((p) => p.path === '/pause');
      assert.equal(posts.length, 1, 'one post: the schedule paused');
      const event = posts[0]?.event;
      assert.equal(event?.kind, 'schedule');
      assert.equal(event?.id, scheduleId);
      assert.equal(event?.outcome, 'paused');
      assert.match(event?.reason ?? '', new RegExp(`paused by its failed run ${sweepId}`));
      assert.match(event?.temporalUi ?? '', new RegExp(`/schedules/${scheduleId}$`));
      await env.client.schedule.getHandle(scheduleId).delete();
    });
  });

  it('the CLI refuses a bad sweep spec or bad schedule flags with exit 2, before connecting anywhere', async () => {
    const base = join(storage, 'base.yaml');
    await writeFile(base, validSpecYaml(storage));
    const bad = join(storage, 'bad-sweep.yaml');
    await writeFile(bad, 'name: bad\nbase: base.yaml\nparameters:\n  grid:\n    trainer.seedTrian: [1, 2]\n');
    const good = join(storage, 'good-sweep.yaml');
    await writeFile(
      good,
      'name: good\nbase: base.yaml\nparameters:\n  grid:\n    trainer.seedTrain: [1, 2]\n',
    );
    const cases: [string[], RegExp][] = [
      [['sweep', '--embedded', bad], /trainer\.seedTrian: unknown field/],
      [['schedule', 'create', 'nightly', bad, '--every', '1h'], /trainer\.seedTrian: unknown field/],
      [['schedule', 'create', 'nightly', good, '--every', 'soon'], /every: a duration like 30s/],
      [['schedule', 'create', 'nightly', good, '--cron', '0 2 * * *', '--overlap', 'sometimes'], /overlap/],
    ];
    for (const [args, expected] of cases) {
      const failed = await run('npx', ['tsx', 'src/cli/main.ts', ...args], {
        env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
      }).then(
        () => assert.fail(`accepted: ${args.join(' ')}`),
        (err: { code: number; stderr: string }) => err,
      );
      assert.equal(failed.code, 2, failed.stderr);
      assert.match(failed.stderr, expected);
    }
  });
});
