import { type Client, type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import type { BudgetLedgerClient } from '../activities/budget/ledger.js';
import { type TeamBudget, budgetWorkflowId } from '../domain/budget/budgets.js';
export type { BudgetLedgerClient };
import type { teamBudget } from '../workflows/team-budget.js';
import {
  ensureStartedSignal,
  reportUpdate,
  reserveUpdate,
  setBudgetUpdate,
  settleUpdate,
} from '../workflows/team-budget-definitions.js';

/**
 * Each call sends its Update to the team's running workflow; when there is none, it signal-with-starts
 * it first (the budget as its input), so the first reserve of a team, or `budgets apply`, starts it. Workflows cannot
 * send another workflow's Update themselves: the experiment reaches this through activities.
 */
export function budgetLedgerClient(client: Client, taskQueue: string): BudgetLedgerClient {
  const handleOf = (team: string) => client.workflow.getHandle(budgetWorkflowId(team));
  const start = (team: string, budget: TeamBudget) =>
    client.workflow.signalWithStart<typeof teamBudget>('teamBudget', {
      workflowId: budgetWorkflowId(team),
      taskQueue,
      args: [{ team, budget }],
      signal: ensureStartedSignal,
      signalArgs: [],
    });
  /** The Update on the running workflow; started first only when there is none (one signal then). */
  async function send<R>(
    team: string,
    budget: TeamBudget,
    fn: (h: WorkflowHandle) => Promise<R>,
  ): Promise<R> {
    try {
      return await fn(handleOf(team));
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return fn(await start(team, budget));
    }
  }
  return {
    reserve: (team, budget, req) =>
      send(team, budget, (h) => h.executeUpdate(reserveUpdate, { args: [req] })),
    async settle(team, budget, req) {
      const update = (h: WorkflowHandle) => h.executeUpdate(settleUpdate, { args: [req] });
      if (budget) return send(team, budget, update);
      try {
        return await update(handleOf(team));
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
    setBudget: (team, budget) =>
      send(team, budget, (h) => h.executeUpdate(setBudgetUpdate, { args: [budget] })),
    async report(team) {
      try {
        return await handleOf(team).executeUpdate(reportUpdate);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return undefined;
        throw err;
      }
    },
  };
}
