import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { budgetPatchActivation } from '../../src/worker/budget-patch-activation.js';
import { experimentStart } from '../../src/cli/start-options.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { HASHING_DURING_TEARDOWN, TEAM_BUDGET } from '../../src/workflows/patches.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { type HistoryJson, patchMarkers, scheduledActivities } from '../helpers/history-events.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/**
 * One experiment of `team` (started as the CLI starts it: spec.team and the RagenTeam attribute) on
 * a worker whose budgets file lists team vision only, with the callback the worker installs.
 */
async function runAs(team: string): Promise<{ history: HistoryJson; json: string; workflowId: string }> {
  const taskQueue = uniqueId('budget-marker');
  const budget = { gpuHours: 50, period: 'day', policy: 'refuse' } as const;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    // A stand-in ledger that grants: what matters here is which commands the workflow sends.
    activities: fakeActivities({
      reserveBudget: async ({ request }) => ({
        status: 'granted',
        gpuHours: request.gpuHours,
        budget,
        queuedSeconds: 0,
      }),
    }).activities,
    patchActivationCallback: budgetPatchActivation(() => ({ teams: { vision: budget } })),
  });
  const workflowId = uniqueId(`run-${team}`);
  const spec = testSpec({ team, budget: { estimateGpuHours: 1 } });
  const json = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId,
      args: [testInput(spec)],
      ...experimentStart(spec),
    });
    assert.equal((await handle.result()).outcome, 'succeeded');
    return historyToJSON(await handle.fetchHistory());
  });
  return { history: JSON.parse(json) as HistoryJson, json, workflowId };
}

describe('team-budget marker: only a run whose team has a budget records it', () => {
  it('a team without a budget: no marker, no reserve, no settle; the other new branches are taken', async () => {
    const run = await runAs('rl-agents');
    const markers = patchMarkers(run.history).map((m) => m.id);
    assert.ok(!markers.includes(TEAM_BUDGET), `markers: ${markers.join(', ')}`);
    assert.ok(markers.includes(HASHING_DURING_TEARDOWN), 'hashing-during-teardown still recorded');
    const activities = scheduledActivities(run.history);
    assert.ok(
      !activities.includes('reserveBudget') && !activities.includes('settleBudget'),
      activities.join(),
    );
    // The worker replaying it later (no callback is asked on replay) takes the same path.
    await Worker.runReplayHistory(
      { workflowBundle: await workflowBundle() },
      JSON.parse(run.json),
      run.workflowId,
    );
  });

  it('a team with a budget: the marker, then reserve after preflight and settle after teardown', async () => {
    const run = await runAs('vision');
    assert.ok(patchMarkers(run.history).some((m) => m.id === TEAM_BUDGET));
    const activities = scheduledActivities(run.history);
    assert.deepEqual(activities.slice(0, 2), ['preflight', 'reserveBudget']);
    assert.ok(activities.indexOf('settleBudget') > activities.indexOf('teardown'), activities.join());
    await Worker.runReplayHistory(
      { workflowBundle: await workflowBundle() },
      JSON.parse(run.json),
      run.workflowId,
    );
  });
});
