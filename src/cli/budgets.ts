import type { OrchestratorConfig } from '../config/config.js';
import { loadBudgetsFile } from '../config/budgets-file.js';
import { budgetLedgerClient } from '../worker/budget-ledger-client.js';
import type { BudgetReport } from '../domain/budget/budget-ledger.js';
import { withClient } from './client.js';
import { alignedTable } from './text-table.js';

/**
 * `budgets apply <file>`: each team's budget workflow is started (signal-with-start) or told its new
 * budget (the setBudget Update); the file is validated first, so a bad one changes nothing.
 */
export async function budgetsApplyCommand(config: OrchestratorConfig, file: string): Promise<number> {
  const budgets = await loadBudgetsFile(file);
  const reports = await withClient(config, async (client) => {
    const ledger = budgetLedgerClient(client, config.RAGEN_TASK_QUEUE);
    const out: BudgetReport[] = [];
    for (const [team, budget] of Object.entries(budgets.teams))
      out.push(await ledger.setBudget(team, budget));
    return out;
  });
  process.stdout.write(budgetsTable(reports));
  return 0;
}

/** `budgets report [--team T]`: every team of the file (or one team), as a table or JSON. */
export async function budgetsReportCommand(
  config: OrchestratorConfig,
  input: { team?: string; file?: string; format: 'table' | 'json' },
): Promise<number> {
  const teams = input.team
    ? [input.team]
    : Object.keys((await loadBudgetsFile(input.file ?? config.RAGEN_BUDGETS_FILE ?? 'budgets.yaml')).teams);
  const reports = await withClient(config, async (client) => {
    const ledger = budgetLedgerClient(client, config.RAGEN_TASK_QUEUE);
    const out: BudgetReport[] = [];
    for (const team of teams) {
      const r = await ledger.report(team);
      if (r) out.push(r);
      else
        console.error(`team ${team}: no budget workflow (run budgets apply, or a run of the team starts it)`);
    }
    return out;
  });
  process.stdout.write(
    input.format === 'json' ? `${JSON.stringify(reports, null, 2)}\n` : budgetsTable(reports),
  );
  return 0;
}

const hours = (h: number) => h.toFixed(2);

/** One row per team: the budget, its period, what is spent, reserved and left, and the queue. */
export function budgetsTable(reports: readonly BudgetReport[]): string {
  return alignedTable(
    ['TEAM', 'BUDGET', 'PERIOD', 'SINCE', 'SPENT', 'RESERVED', 'LEFT', 'POLICY', 'QUEUED'],
    reports.map((r) => [
      r.team,
      hours(r.budget.gpuHours),
      r.budget.period,
      r.periodStart.slice(0, 10),
      hours(r.spent),
      hours(r.reserved),
      hours(Math.max(0, r.budget.gpuHours - r.spent - r.reserved)),
      r.budget.policy,
      String(r.queue.length),
    ]),
  );
}
