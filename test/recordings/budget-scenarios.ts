import type { TeamBudget } from '../../src/domain/budget/budgets.js';
import type { TeamBudgetInput } from '../../src/workflows/team-budget.js';
import {
  reportUpdate,
  reserveUpdate,
  setBudgetUpdate,
  settleUpdate,
} from '../../src/workflows/team-budget-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import type { Scenario } from '../helpers/history-recorder.js';
import { testInput, testSpec } from '../helpers/specs.js';

const budget: TeamBudget = { gpuHours: 10, period: 'week', policy: 'queue' };

/**
 * Budgets (patch `team-budget`): an experiment whose team has a budget (reserve granted after
 * preflight, settle after teardown), and a team's budget workflow taking every Update, a queued
 * reservation among them, until the operator retires it (cancel).
 */
export const budgetScenarios: Record<string, Scenario> = {
  'experiment-budget-granted': () => ({
    workflowId: 'experiment-budget-granted',
    workflowType: 'experiment',
    args: [testInput(testSpec({ team: 'vision', budget: { estimateGpuHours: 2 } }))],
    budgets: { teams: { vision: budget } },
    activities: fakeActivities({
      reserveBudget: async ({ request }) => ({
        status: 'granted',
        gpuHours: request.gpuHours,
        budget,
        queuedSeconds: 0,
      }),
      settleBudget: async ({ key, gpuHours }) => ({
        key,
        gpuHours,
        periodStart: '2026-11-30T00:00:00.000Z',
        spentAfter: gpuHours,
      }),
    }).activities,
  }),

  'budget-vision': () => ({
    workflowId: 'budget-vision',
    workflowType: 'teamBudget',
    args: [{ team: 'vision', budget } satisfies TeamBudgetInput],
    activities: fakeActivities().activities,
    drive: async (handle) => {
      await handle.executeUpdate(reserveUpdate, { args: [{ key: 'run-a/1', gpuHours: 8 }] });
      // Does not fit beside run-a: queued, then granted on its re-ask after run-a settled.
      await handle.executeUpdate(reserveUpdate, { args: [{ key: 'run-b/1', gpuHours: 4 }] });
      await handle.executeUpdate(settleUpdate, { args: [{ key: 'run-a/1', gpuHours: 5 }] });
      await handle.executeUpdate(reserveUpdate, { args: [{ key: 'run-b/1', gpuHours: 4 }] });
      await handle.executeUpdate(setBudgetUpdate, { args: [{ ...budget, gpuHours: 20 }] });
      await handle.executeUpdate(reportUpdate);
      await handle.cancel();
    },
  }),
};
