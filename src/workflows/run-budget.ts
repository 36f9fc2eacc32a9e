import type { ReserveBudgetResult } from '../activities/budget/budget.js';
import type { SettleAnswer } from '../domain/budget/budget-ledger.js';

/** A run's place in its team's budget (absent before the team-budget patch). */
export interface RunBudget {
  team: string;
  /** The run's workflow id and run id: one key per run, so a retry or a re-ask reserves nothing twice. */
  key: string;
  estimateGpuHours: number;
  /** Set once the reserve activity returned (granted or unbudgeted); absent while queued, or after a refusal. */
  reserved?: ReserveBudgetResult;
  refused?: boolean;
  settled?: SettleAnswer | { status: 'unbudgeted' };
}
