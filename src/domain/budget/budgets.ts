import { z } from 'zod';
import { AccountNameSchema } from '../spec/experiment.js';
import { SpecError, issuesFromZod } from '../spec/spec-error.js';

/** Budget periods start at 00:00 UTC: each day, each Monday (ISO week), each month's 1st. */
export const BudgetPeriodSchema = z.enum(['day', 'week', 'month'], {
  error: 'use day, week or month (periods start at 00:00 UTC; a week on Monday)',
});
export type BudgetPeriod = z.infer<typeof BudgetPeriodSchema>;

/** What a run that does not fit gets: `queue` waits for room (FIFO), `refuse` fails it at once. */
export const BudgetPolicySchema = z.enum(['queue', 'refuse'], {
  error: 'use queue (a run that does not fit waits its turn) or refuse (it fails at once)',
});
export type BudgetPolicy = z.infer<typeof BudgetPolicySchema>;

export const TeamBudgetSchema = z.strictObject({
  gpuHours: z
    .number({ error: 'is required: the GPU-hours the team may allocate per period, a number above 0' })
    .positive('must be above 0: the GPU-hours the team may allocate per period'),
  period: BudgetPeriodSchema,
  policy: BudgetPolicySchema,
});
export type TeamBudget = z.infer<typeof TeamBudgetSchema>;

/** budgets.yaml: `teams: {<team>: {gpuHours, period, policy}}`; a team not listed is not budgeted. */
export const BudgetsFileSchema = z.strictObject({
  teams: z.record(AccountNameSchema, TeamBudgetSchema),
});
export type BudgetsFile = z.infer<typeof BudgetsFileSchema>;

/** Parse a budgets file's content (already read as YAML or JSON) at the boundary; errors name field and fix. */
export function parseBudgets(value: unknown, source: string): BudgetsFile {
  const parsed = BudgetsFileSchema.safeParse(value);
  if (!parsed.success) throw new SpecError(source, issuesFromZod(parsed.error), 'budgets file');
  return parsed.data;
}

const DAY_MS = 24 * 3600 * 1000;

/** The start (ISO, UTC) of the period that holds `iso`: 00:00 UTC of the day, of Monday, of the 1st. */
export function periodStart(period: BudgetPeriod, iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) throw new Error(`not a time: ${iso}`);
  const day = Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
  if (period === 'day') return new Date(day).toISOString();
  if (period === 'week') return new Date(day - ((t.getUTCDay() + 6) % 7) * DAY_MS).toISOString();
  return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1)).toISOString();
}

/** GPU-hours rounded for messages and reports (to the GPU-second). */
export const roundHours = (h: number): number => Math.round(h * 3600) / 3600;
const shown = (h: number): string => String(Math.round(h * 1000) / 1000);

/** Whether a reservation of `gpuHours` fits next to what is spent and reserved this period. */
export function fits(
  budget: Pick<TeamBudget, 'gpuHours'>,
  spent: number,
  reserved: number,
  gpuHours: number,
): boolean {
  return spent + reserved + gpuHours <= budget.gpuHours + 1e-9;
}

/** The words of a refusal: the budget, the spend so far (and what is reserved) and the reservation. */
export function refusalMessage(
  team: string,
  budget: TeamBudget,
  start: string,
  spent: number,
  reserved: number,
  gpuHours: number,
): string {
  const never = gpuHours > budget.gpuHours ? ' (more than the whole budget: it can never fit)' : '';
  return `budget of team ${team} is ${shown(budget.gpuHours)} GPU-hours per ${budget.period} (since ${start}): spent ${shown(spent)}, reserved by running runs ${shown(reserved)}; this run's reservation of ${shown(gpuHours)} GPU-hours would exceed it${never}. Lower budget.estimateGpuHours or deadlines.runSeconds, wait for the next ${budget.period}, or raise the team's gpuHours in budgets.yaml (ragen-orchestrator budgets apply)`;
}

/** GPU-hours a run reserves: the spec's stated estimate, else nnodes x nGpusPerNode x runSeconds. */
export function estimateGpuHours(spec: {
  trainer: { nnodes: number; nGpusPerNode: number };
  deadlines: { runSeconds: number };
  budget?: { estimateGpuHours?: number | undefined } | undefined;
}): number {
  const stated = spec.budget?.estimateGpuHours;
  if (stated !== undefined) return stated;
  return (spec.trainer.nnodes * spec.trainer.nGpusPerNode * spec.deadlines.runSeconds) / 3600;
}

/** The budget workflow of a team: one per team, found by this id. */
export const budgetWorkflowId = (team: string): string => `budget-${team}`;
