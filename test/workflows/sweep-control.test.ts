import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities/index.js';
import type { SweepInput, SweepManifest, SweepResult, SweepStatus } from '../../src/domain/sweep.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { setSweepLimitsUpdate } from '../../src/workflows/sweep-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const until = async (what: string, ok: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/**
 * Stand-in children (fake activities): training heartbeats until the test releases it, so the test
 * decides how many children are between preflight and teardown when it changes the limits.
 */
function gatedActivities() {
  const track = { active: 0, maxActive: 0, started: 0, held: true, archived: [] as SweepManifest[] };
  const { activities } = fakeActivities({
    preflight: async () => {
      track.started++;
      track.active++;
      track.maxActive = Math.max(track.maxActive, track.active);
      return { checks: [] };
    },
    train: async ({ spec }) => {
      const ctx = Context.current();
      while (track.held) {
        ctx.heartbeat();
        await new Promise((r) => setTimeout(r, 20));
      }
      return {
        finalStep: spec.trainer.totalTrainingSteps,
        lastCheckpointStep: spec.trainer.totalTrainingSteps,
        lastMetrics: {},
        entrypoint: [],
      };
    },
    teardown: async () => {
      track.active--;
      return { alreadyGone: false };
    },
    archiveSweep: async ({ manifest }) => {
      track.archived.push(manifest);
      return { manifestPath: '/fake/sweep.json', csvPath: '/fake/sweep.csv', sha256: 'f'.repeat(64) };
    },
  });
  return { activities, track };
}

async function withSweep<T>(
  input: SweepInput,
  activities: Activities,
  body: (id: string) => Promise<T>,
): Promise<{ during: T; result: SweepResult }> {
  const taskQueue = uniqueId('sweep-control-tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    maxConcurrentWorkflowTaskExecutions: 50,
  });
  const workflowId = uniqueId('sweep-control');
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof sweep>('sweep', {
      taskQueue,
      workflowId,
      args: [input],
    });
    const during = await body(workflowId);
    return { during, result: await handle.result() };
  });
}

describe('sweep control and GPU-seconds (time-skipping server, stand-in children)', () => {
  it('raises and lowers concurrency with an Update; the validator refuses bad limits; GPU-seconds add up', async () => {
    const { activities, track } = gatedActivities();
    const spec = seedSweep([1, 2, 3, 4, 5, 6], { concurrency: 1 });
    const { during, result } = await withSweep(sweepInput(spec), activities, async (id) => {
      const handle = env.client.workflow.getHandle(id);
      await until('the first child to train', () => track.active === 1);
      const refusals: string[] = [];
      for (const bad of [{ concurrency: 0 }, { concurrency: 1.5 }, {}, { concurrency: 999 }]) {
        await handle.executeUpdate(setSweepLimitsUpdate, { args: [bad] }).then(
          () => refusals.push('accepted'),
          (err: Error) => refusals.push(String((err.cause as Error | undefined)?.message ?? err.message)),
        );
      }
      const raised: SweepStatus = await handle.executeUpdate(setSweepLimitsUpdate, {
        args: [{ concurrency: 3, failureBudget: 2 }],
      });
      await until('three children at once', () => track.active === 3);
      const maxAfterRaise = track.maxActive;
      const lowered = await handle.executeUpdate(setSweepLimitsUpdate, { args: [{ concurrency: 1 }] });
      // Count from here: the three running finish, then one child at a time.
      track.maxActive = track.active;
      track.held = false;
      await until('every child to start', () => track.started === 6);
      return { refusals, raised, lowered, maxAfterRaise };
    });
    assert.match(during.refusals[0] ?? '', /concurrency: .*(too small|>=? ?1|at least)/i);
    assert.match(during.refusals[1] ?? '', /concurrency/);
    assert.match(during.refusals[2] ?? '', /nothing to change/);
    assert.match(during.refusals[3] ?? '', /concurrency: .*from 1 to 256/);
    assert.equal(during.raised.concurrency, 3);
    assert.equal(during.raised.failureBudget, 2);
    assert.equal(during.lowered.concurrency, 1);
    assert.equal(during.lowered.failureBudget, 2, 'a change of one limit keeps the other');
    assert.equal(during.maxAfterRaise, 3);
    assert.ok(track.maxActive <= 3, 'lowering never exceeds what already ran');
    assert.equal(result.succeeded, 6);
    const manifest = track.archived[0];
    assert.deepEqual(
      manifest?.limitChanges?.map((c) => [c.concurrency, c.failureBudget]),
      [
        [3, 2],
        [1, 2],
      ],
    );
    // GPU-seconds: every child reports them; the sweep's total is their sum (2 GPUs per cluster).
    const perChild = result.ranked.map((r) => r.gpuSeconds ?? -1);
    assert.ok(
      perChild.every((s) => s >= 0),
      `every child has GPU-seconds: ${perChild.join(',')}`,
    );
    const sum = perChild.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs((manifest?.gpuUsage?.allocatedSeconds ?? -1) - sum) < 0.01);
    assert.ok((manifest?.gpuUsage?.allocatedSeconds ?? 0) > 0, 'clusters existed for a while');
  });

  it('refuses any change once the last child has started', async () => {
    const { activities, track } = gatedActivities();
    const { during } = await withSweep(
      sweepInput(seedSweep([1, 2], { concurrency: 2 })),
      activities,
      async (id) => {
        const handle = env.client.workflow.getHandle(id);
        await until('both children to train', () => track.active === 2);
        const late = await handle.executeUpdate(setSweepLimitsUpdate, { args: [{ concurrency: 4 }] }).then(
          () => 'accepted',
          (err: Error) => String((err.cause as Error | undefined)?.message ?? err.message),
        );
        track.held = false;
        return late;
      },
    );
    assert.match(during, /finished starting children/);
  });
});
