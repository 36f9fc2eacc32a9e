import type {
  BudgetReport,
  ReserveAnswer,
  ReserveRequest,
  SettleAnswer,
  SettleRequest,
} from '../../domain/budget/budget-ledger.js';
import type { TeamBudget } from '../../domain/budget/budgets.js';

/** The team budget workflows, as activities and the CLI reach them (through the Temporal client). */
export interface BudgetLedgerClient {
  reserve(team: string, budget: TeamBudget, req: ReserveRequest): Promise<ReserveAnswer>;
  /** Without a budget, only a running workflow is told (undefined when there is none). */
  settle(team: string, budget: TeamBudget | undefined, req: SettleRequest): Promise<SettleAnswer | undefined>;
  setBudget(team: string, budget: TeamBudget): Promise<BudgetReport>;
  /** Undefined when the team has no budget workflow. */
  report(team: string): Promise<BudgetReport | undefined>;
}
