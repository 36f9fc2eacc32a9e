import { z } from 'zod';
import {
  TeamBudgetSchema,
  type TeamBudget,
  fits,
  periodStart,
  refusalMessage,
  roundHours,
} from './budgets.js';

/**
 * The books of one team's budget, kept by its budget workflow and carried across continue-as-new.
 * Pure functions over a plain JSON record (no Map or Set): the workflow only calls them with its
 * own clock, so they are tested without a server.
 */

/** A reservation key: the run's workflow id and run id (one per run; a retried activity reuses it). */
const KeySchema = z.string().min(1, 'is required: the run key (workflow id and run id)').max(400);
const HoursSchema = z
  .number()
  .min(0, 'GPU-hours cannot be negative')
  .refine(Number.isFinite, 'GPU-hours must be a finite number');

export const ReserveRequestSchema = z.strictObject({ key: KeySchema, gpuHours: HoursSchema });
export type ReserveRequest = z.infer<typeof ReserveRequestSchema>;
export const SettleRequestSchema = z.strictObject({ key: KeySchema, gpuHours: HoursSchema });
export type SettleRequest = z.infer<typeof SettleRequestSchema>;

const HeldSchema = z.strictObject({ key: z.string(), gpuHours: z.number(), at: z.string() });
export type Held = z.infer<typeof HeldSchema>;
const QueuedSchema = HeldSchema.extend({ askedAt: z.string() });

export const ReserveAnswerSchema = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('granted'), gpuHours: z.number() }),
  z.strictObject({ status: z.literal('queued'), position: z.number(), message: z.string() }),
  z.strictObject({ status: z.literal('refused'), message: z.string() }),
]);
export type ReserveAnswer = z.infer<typeof ReserveAnswerSchema>;

export const SettleAnswerSchema = z.strictObject({
  key: z.string(),
  gpuHours: z.number(),
  /** The period the spend counts in, and the team's spend in it right after this settle. */
  periodStart: z.string(),
  spentAfter: z.number(),
});
export type SettleAnswer = z.infer<typeof SettleAnswerSchema>;

export const BudgetLedgerSchema = z.strictObject({
  team: z.string(),
  budget: TeamBudgetSchema,
  periodStart: z.string(),
  /** GPU-hours settled in this period. */
  spent: z.number(),
  /** Granted and not yet settled (a run that started in an earlier period keeps its reservation). */
  reservations: z.array(HeldSchema),
  /** Waiting for room, first come first served (policy queue). */
  queue: z.array(QueuedSchema),
  /** Answers to settles of this period and the one before: a repeated settle returns the same. */
  settled: z.record(z.string(), SettleAnswerSchema),
  /** Refusals of this period by key: a repeated reserve returns the same. */
  refused: z.record(z.string(), z.string()),
});
export type BudgetLedger = z.infer<typeof BudgetLedgerSchema>;

export interface BudgetReport {
  team: string;
  budget: TeamBudget;
  periodStart: string;
  spent: number;
  reserved: number;
  reservations: Held[];
  queue: Held[];
}

/**
 * A queued run re-asks every poll interval (its activity heartbeats meanwhile); one not heard of
 * for this long (its workflow was terminated, say) leaves the queue so it blocks nobody.
 */
export const QUEUE_STALE_SECONDS = 15 * 60;

export function newLedger(team: string, budget: TeamBudget, now: string): BudgetLedger {
  return {
    team,
    budget,
    periodStart: periodStart(budget.period, now),
    spent: 0,
    reservations: [],
    queue: [],
    settled: {},
    refused: {},
  };
}

const sum = (xs: readonly Held[]) => xs.reduce((s, x) => s + x.gpuHours, 0);
const ms = (iso: string) => Date.parse(iso);

/** A new period (or a new period length) starts with nothing spent; settles of the last one are kept. */
function roll(ledger: BudgetLedger, now: string): void {
  const start = periodStart(ledger.budget.period, now);
  if (start === ledger.periodStart) return;
  const previous = ledger.periodStart;
  ledger.periodStart = start;
  ledger.spent = 0;
  ledger.refused = {};
  // Kept one period back, so a settle retried just after midnight is still known.
  ledger.settled = Object.fromEntries(
    Object.entries(ledger.settled).filter(([, a]) => a.periodStart >= previous),
  );
}

/** Grant queued runs in FIFO order while the head fits; drop the ones that stopped asking. */
function promote(ledger: BudgetLedger, now: string): void {
  ledger.queue = ledger.queue.filter((q) => ms(now) - ms(q.askedAt) <= QUEUE_STALE_SECONDS * 1000);
  for (;;) {
    const head = ledger.queue[0];
    if (!head || !fits(ledger.budget, ledger.spent, sum(ledger.reservations), head.gpuHours)) return;
    ledger.queue.shift();
    ledger.reservations.push({ key: head.key, gpuHours: head.gpuHours, at: head.at });
  }
}

function queuedAnswer(ledger: BudgetLedger, key: string, gpuHours: number): ReserveAnswer {
  const position = ledger.queue.findIndex((q) => q.key === key) + 1;
  const { team, budget } = ledger;
  return {
    status: 'queued',
    position,
    message: `queued at position ${position} for team ${team}'s budget: ${refusalMessage(team, budget, ledger.periodStart, ledger.spent, sum(ledger.reservations), gpuHours)}`,
  };
}

/**
 * Reserve a run's estimate. Idempotent by key: a run already granted, queued, settled or refused
 * gets the same answer (a queued one its current position), and nothing changes twice.
 */
export function reserve(ledger: BudgetLedger, req: ReserveRequest, now: string): ReserveAnswer {
  roll(ledger, now);
  promote(ledger, now);
  const { key } = req;
  const done = ledger.settled[key];
  if (done) return { status: 'granted', gpuHours: done.gpuHours };
  const refused = ledger.refused[key];
  if (refused !== undefined) return { status: 'refused', message: refused };
  const held = ledger.reservations.find((r) => r.key === key);
  if (held) return { status: 'granted', gpuHours: held.gpuHours };
  const queued = ledger.queue.find((q) => q.key === key);
  if (queued) {
    queued.askedAt = now;
    return queuedAnswer(ledger, key, queued.gpuHours);
  }
  const { budget, team } = ledger;
  const reserved = sum(ledger.reservations);
  // FIFO: nobody passes a run already waiting, even one that would fit.
  if (ledger.queue.length === 0 && fits(budget, ledger.spent, reserved, req.gpuHours)) {
    ledger.reservations.push({ key, gpuHours: req.gpuHours, at: now });
    return { status: 'granted', gpuHours: req.gpuHours };
  }
  if (budget.policy === 'refuse' || req.gpuHours > budget.gpuHours) {
    const message = refusalMessage(team, budget, ledger.periodStart, ledger.spent, reserved, req.gpuHours);
    ledger.refused[key] = message;
    return { status: 'refused', message };
  }
  ledger.queue.push({ key, gpuHours: req.gpuHours, at: now, askedAt: now });
  return queuedAnswer(ledger, key, req.gpuHours);
}

/**
 * Replace a run's reservation (or its place in the queue) by its measured spend, counted in the
 * current period; then grant whoever now fits. Idempotent by key: a repeated settle returns the
 * first answer and counts nothing again.
 */
export function settle(ledger: BudgetLedger, req: SettleRequest, now: string): SettleAnswer {
  roll(ledger, now);
  const done = ledger.settled[req.key];
  if (done) return done;
  ledger.reservations = ledger.reservations.filter((r) => r.key !== req.key);
  ledger.queue = ledger.queue.filter((q) => q.key !== req.key);
  ledger.spent += req.gpuHours;
  const answer = {
    key: req.key,
    gpuHours: req.gpuHours,
    periodStart: ledger.periodStart,
    spentAfter: ledger.spent,
  };
  ledger.settled[req.key] = answer;
  promote(ledger, now);
  return answer;
}

/** A new budget (budgets apply): a new period length starts its period now; room may free the queue. */
export function setBudget(ledger: BudgetLedger, budget: TeamBudget, now: string): void {
  ledger.budget = budget;
  roll(ledger, now);
  promote(ledger, now);
}

/** The books now (after a period change, if one is due). */
export function report(ledger: BudgetLedger, now: string): BudgetReport {
  roll(ledger, now);
  promote(ledger, now);
  return {
    team: ledger.team,
    budget: ledger.budget,
    periodStart: ledger.periodStart,
    spent: roundHours(ledger.spent),
    reserved: roundHours(sum(ledger.reservations)),
    reservations: ledger.reservations.map((r) => ({ ...r })),
    queue: ledger.queue.map(({ key, gpuHours, at }) => ({ key, gpuHours, at })),
  };
}
