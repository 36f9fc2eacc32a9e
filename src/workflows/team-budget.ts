import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { z } from 'zod';
import {
  type BudgetLedger,
  ReserveRequestSchema,
  SettleRequestSchema,
  newLedger,
  report,
  reserve,
  setBudget,
  settle,
} from '../domain/budget/budget-ledger.js';
import { type TeamBudget, TeamBudgetSchema } from '../domain/budget/budgets.js';
import { workflowNowIso } from './clock.js';
import {
  ensureStartedSignal,
  reportUpdate,
  reserveUpdate,
  setBudgetUpdate,
  settleUpdate,
} from './team-budget-definitions.js';

export interface TeamBudgetInput {
  team: string;
  budget: TeamBudget;
  /** The books carried across continue-as-new (absent on the first start). */
  ledger?: BudgetLedger;
  /** Continue-as-new past this many history events (or when the server suggests it). */
  historyEventLimit?: number;
}

/** Continue-as-new well before the server's 50k-event limit: every reserve and settle is history. */
export const TEAM_BUDGET_HISTORY_EVENTS = 2000;

/**
 * One team's GPU-hour budget: a long-running workflow (id `budget-<team>`) that keeps the books of
 * the current period. Updates: reserve (key, GPU-hours) → granted / queued (position) / refused
 * (naming the budget, the spend and the reservation); settle (key, measured GPU-hours) → the
 * reservation becomes spend; report; setBudget. Every handler is idempotent by key and finishes at
 * once (see below), so the books are consistent whatever retries or restarts repeat.
 *
 * Queue policy: a run that does not fit gets `queued` and its position at once; its activity
 * heartbeats and re-asks, and is granted when settles free room, in FIFO order. The Update never
 * waits for room: a waiting handler would keep allHandlersFinished() false, and so block
 * continue-as-new for as long as anybody queues, while the queue itself lives in the ledger that
 * continue-as-new carries. A queued run that stops re-asking (its workflow ended without a settle)
 * leaves the queue after QUEUE_STALE_SECONDS.
 */
export async function teamBudget(input: TeamBudgetInput): Promise<void> {
  const ledger = input.ledger ?? newLedger(input.team, input.budget, workflowNowIso());
  setHandler(reserveUpdate, (req) => reserve(ledger, req, workflowNowIso()), {
    validator: (req) => validate(ReserveRequestSchema, req, 'reserve'),
  });
  setHandler(settleUpdate, (req) => settle(ledger, req, workflowNowIso()), {
    validator: (req) => validate(SettleRequestSchema, req, 'settle'),
  });
  setHandler(reportUpdate, () => report(ledger, workflowNowIso()));
  setHandler(
    setBudgetUpdate,
    (budget) => {
      setBudget(ledger, budget, workflowNowIso());
      return report(ledger, workflowNowIso());
    },
    { validator: (budget) => validate(TeamBudgetSchema, budget, 'setBudget') },
  );
  setHandler(ensureStartedSignal, () => undefined);
  const limit = input.historyEventLimit ?? TEAM_BUDGET_HISTORY_EVENTS;
  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= limit);
  // Updates accepted in this task finish first: their answers are in the ledger carried on.
  await condition(allHandlersFinished);
  await continueAsNew<typeof teamBudget>({ ...input, budget: ledger.budget, ledger });
}

/** A validator: refuses (nothing reaches history) with the field and the fix. */
function validate(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new Error(`${what}: ${issues.join('; ')}`);
}
