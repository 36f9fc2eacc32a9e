import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type {
  BudgetReport,
  ReserveAnswer,
  ReserveRequest,
  SettleAnswer,
  SettleRequest,
} from '../domain/budget-ledger.js';
import { type TeamBudget, budgetWorkflowId } from '../domain/budgets.js';
import type { teamBudget } from '../workflows/team-budget.js';
import {
  ensureStartedSignal,
  reportUpdate,
  reserveUpdate,
  setBudgetUpdate,
  settleUpdate,
} from '../workflows/team-budget-definitions.js';

/** The team budget workflows, as activities and the CLI reach them (through the Temporal client). */
export interface BudgetLedgerClient {
  reserve(team: string, budget: TeamBudget, req: ReserveRequest): Promise<ReserveAnswer>;
  /** Without a budget, only a running workflow is told (undefined when there is none). */
  settle(team: string, budget: TeamBudget | undefined, req: SettleRequest): Promise<SettleAnswer | undefined>;
  setBudget(team: string, budget: TeamBudget): Promise<BudgetReport>;
  /** Undefined when the team has no budget workflow. */
  report(team: string): Promise<BudgetReport | undefined>;
}

/**
 * Each call signal-with-starts the team's workflow (so the first reserve of a team starts it, with
 * the budget as its input; a running one ignores the signal), then sends the Update. Workflows cannot
 * send another workflow's Update themselves: the experiment reaches this through activities.
 */
export function budgetLedgerClient(client: Client, taskQueue: string): BudgetLedgerClient {
  const ensure = async (team: string, budget: TeamBudget) =>
    client.workflow.signalWithStart<typeof teamBudget>('teamBudget', {
      workflowId: budgetWorkflowId(team),
      taskQueue,
      args: [{ team, budget }],
      signal: ensureStartedSignal,
      signalArgs: [],
    });
  return {
    async reserve(team, budget, req) {
      return (await ensure(team, budget)).executeUpdate(reserveUpdate, { args: [req] });
    },
    async settle(team, budget, req) {
      if (budget) return (await ensure(team, budget)).executeUpdate(settleUpdate, { args: [req] });
      try {
        return await client.workflow
          .getHandle(budgetWorkflowId(team))
          .executeUpdate(settleUpdate, { args: [req] });
      } catch (err) {
        if (!(err instanceof WorkflowUpdateFailedError) && isNotFound(err)) return undefined;
        throw err;
      }
    },
    async setBudget(team, budget) {
      return (await ensure(team, budget)).executeUpdate(setBudgetUpdate, { args: [budget] });
    },
    async report(team) {
      const handle = client.workflow.getHandle(budgetWorkflowId(team));
      try {
        return await handle.executeUpdate(reportUpdate);
      } catch (err) {
        if (!(err instanceof WorkflowUpdateFailedError) && isNotFound(err)) return undefined;
        throw err;
      }
    },
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}
