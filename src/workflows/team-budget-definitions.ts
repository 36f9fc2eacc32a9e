import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  BudgetReport,
  ReserveAnswer,
  ReserveRequest,
  SettleAnswer,
  SettleRequest,
} from '../domain/budget/budget-ledger.js';
import type { TeamBudget } from '../domain/budget/budgets.js';

/**
 * Updates of the `teamBudget` workflow (one per team, id `budget-<team>`), shared with the
 * activities and the CLI that call them. Each validator refuses bad arguments before anything is
 * written to history.
 */
export const reserveUpdate = defineUpdate<ReserveAnswer, [ReserveRequest]>('reserve');
export const settleUpdate = defineUpdate<SettleAnswer, [SettleRequest]>('settle');
export const reportUpdate = defineUpdate<BudgetReport>('report');
/** `budgets apply`: the team's new budget (gpuHours, period, policy). */
export const setBudgetUpdate = defineUpdate<BudgetReport, [TeamBudget]>('setBudget');

/**
 * Carried by signal-with-start only to start the workflow when it is not running (its input holds
 * the budget); a running one ignores it.
 */
export const ensureStartedSignal = defineSignal('ensureStarted');
