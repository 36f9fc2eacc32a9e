import type { PatchActivationCallback } from '@temporalio/worker';
import type { BudgetsFile } from '../domain/budget/budgets.js';
import { TEAM_BUDGET } from '../workflows/patches.js';
import { SearchAttributes } from '../workflows/search-attributes.js';

/**
 * Whether a run takes the team-budget branch. The worker's budgets file is the only place that
 * knows which teams are budgeted, and the workflow cannot read it; so the worker decides when a new
 * run first reaches `patched('team-budget')`, and the marker records the decision (on replay the
 * history answers, and this is not asked). A run whose team has no budget takes the 1.0.0 path and
 * records no marker.
 *
 * `team`: the run's RagenTeam search attribute (spec.team, which the CLI fills); without it the run
 * may still name a team in its spec, so it takes the branch (whose reserve answers `unbudgeted`).
 * `budgets`: the file as read now, undefined when the worker has none, or the error reading it gave.
 * A file that cannot be read takes the branch too: the reserve then fails, naming what is wrong.
 */
export function takesBudgetBranch(
  budgets: BudgetsFile | undefined | Error,
  team: string | undefined,
): boolean {
  if (budgets === undefined) return false;
  if (budgets instanceof Error || team === undefined) return true;
  return Object.hasOwn(budgets.teams, team);
}

/**
 * The worker's patch activation callback: team-budget as above, every other id always (a new run
 * takes each new branch). `readBudgets` reads the file again on each call, as the reserve does.
 */
export function budgetPatchActivation(readBudgets: (() => BudgetsFile) | undefined): PatchActivationCallback {
  return ({ patchId, workflowInfo }) => {
    if (patchId !== TEAM_BUDGET) return true;
    return takesBudgetBranch(
      readBudgets ? readOrError(readBudgets) : undefined,
      workflowInfo.typedSearchAttributes.get(SearchAttributes.team),
    );
  };
}

function readOrError(read: () => BudgetsFile): BudgetsFile | Error {
  try {
    return read();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
