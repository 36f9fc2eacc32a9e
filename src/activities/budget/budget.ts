import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ReserveRequest, SettleAnswer } from '../../domain/budget/budget-ledger.js';
import type { TeamBudget } from '../../domain/budget/budgets.js';
import { SpecError } from '../../domain/spec/spec-error.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { heartbeatAndWait } from '../common/heartbeat-loop.js';

/** The run's budget: unbudgeted (no budgets file, or no entry for the team), or the team's. */
async function budgetOf(deps: ActivityDeps, team: string): Promise<TeamBudget | undefined> {
  if (!deps.budgets) return undefined;
  try {
    return (await deps.budgets.load())?.teams[team];
  } catch (err) {
    if (err instanceof SpecError) throw permanent(ErrorTypes.BudgetsFileInvalid, err.message);
    throw err;
  }
}

/**
 * How often a queued run asks again: each ask is an Update in the team workflow's history (a few
 * events), so not every poll interval.
 */
export const BUDGET_REASK_MS = 15_000;

export type ReserveBudgetResult =
  | { status: 'unbudgeted' }
  | { status: 'granted'; gpuHours: number; budget: TeamBudget; queuedSeconds: number };

/**
 * Reserve the run's GPU-hour estimate in its team's budget workflow (budgets.yaml on this worker;
 * a team without an entry is not budgeted). Granted: returns. Refused: fails for good
 * (BudgetRefused, naming the budget, the spend and the reservation). Queued: heartbeats
 * {queuedSeconds, position} and re-asks every poll interval until granted; cancelling the run
 * cancels the wait. Idempotent: the key (the run's workflow id and run id) makes a retry, or each
 * re-ask, the same reservation.
 */
export function createReserveBudget(deps: ActivityDeps) {
  return async function reserveBudget(input: {
    team: string;
    request: ReserveRequest;
  }): Promise<ReserveBudgetResult> {
    const budget = await budgetOf(deps, input.team);
    if (!budget || !deps.budgets) return { status: 'unbudgeted' };
    const started = Date.now();
    for (;;) {
      const answer = await deps.budgets.ledger.reserve(input.team, budget, input.request);
      const queuedSeconds = Math.round((Date.now() - started) / 1000);
      if (answer.status === 'granted')
        return { status: 'granted', gpuHours: answer.gpuHours, budget, queuedSeconds };
      if (answer.status === 'refused') throw permanent(ErrorTypes.BudgetRefused, answer.message);
      await heartbeatAndWait(
        { queuedSeconds, position: answer.position, message: answer.message },
        deps.budgetPollIntervalMs ?? BUDGET_REASK_MS,
      );
    }
  };
}

/**
 * Settle the run: its reservation (or its place in the queue) becomes the measured GPU-hours.
 * Idempotent by key: a retry after the Update was applied (a worker killed meanwhile) gets the
 * first answer and counts nothing twice. With the budget it was granted under (the workflow keeps
 * it), the team's workflow is reached even if the team left budgets.yaml meanwhile; without one (the
 * run was cancelled while queued) only an existing workflow is told, and none means nothing to settle.
 */
export function createSettleBudget(deps: ActivityDeps) {
  return async function settleBudget(input: {
    team: string;
    budget?: TeamBudget;
    key: string;
    gpuHours: number;
  }): Promise<SettleAnswer | { status: 'unbudgeted' }> {
    const answer = await deps.budgets?.ledger.settle(input.team, input.budget, {
      key: input.key,
      gpuHours: input.gpuHours,
    });
    return answer ?? { status: 'unbudgeted' };
  };
}
