import { z } from 'zod';

/** A duration the Temporal client reads: a number and a unit (`2s`, `5 minutes`, `1h`, `1d`). */
const Duration = z
  .string()
  .regex(
    /^\d+(\.\d+)?\s*(ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?|d|days?)$/,
    'a duration like 30s, 5m, 2h or 1d',
  );

export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;

/**
 * What `schedule create` asks for. Defaults follow the design: overlap skip (never two sweeps of
 * one schedule at once), a one-minute catch-up window (a backlog of missed runs after an outage
 * is dropped, not started all at once), pause after a failed run.
 */
export const ScheduleRequestSchema = z
  .strictObject({
    scheduleId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'letters, digits, ., _ and -'),
    cron: z
      .string()
      .refine(
        (c) =>
          /^@(yearly|annually|monthly|weekly|daily|hourly)$/.test(c.trim()) ||
          [5, 6, 7].includes(c.trim().split(/\s+/).length),
        {
          message:
            "a cron expression of 5 fields (minute hour day month weekday), e.g. '0 2 * * *', or @daily",
        },
      )
      .optional(),
    every: Duration.optional(),
    overlap: z.enum(OVERLAP_POLICIES).default('skip'),
    catchupWindow: Duration.default('1m'),
    pauseOnFailure: z.boolean().default(true),
  })
  .superRefine((r, ctx) => {
    if ((r.cron === undefined) === (r.every === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: 'give exactly one of --cron EXPR or --every DURATION',
      });
    }
  });
export type ScheduleRequest = z.infer<typeof ScheduleRequestSchema>;

/**
 * The memo key a schedule puts on every run it starts: which schedule started it and whether the
 * server pauses that schedule when the run fails, so the run can tell the schedule's `paused`
 * (src/workflows/schedule-pause.ts).
 */
export const SCHEDULE_MEMO_KEY = 'ragenSchedule';
export interface ScheduleMemo {
  scheduleId: string;
  pauseOnFailure: boolean;
}
