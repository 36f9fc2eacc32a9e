import { z } from 'zod';

export const ReaperInputSchema = z.strictObject({
  /** A cluster is deleted only once its owner has been closed (or missing) for this long. */
  graceSeconds: z.number().int().min(0).default(120),
});
export type ReaperInput = z.infer<typeof ReaperInputSchema>;

export const ReaperEntrySchema = z.strictObject({
  backend: z.string(),
  cluster: z.string(),
  ownerWorkflowId: z.string().optional(),
  action: z.enum(['deleted', 'kept', 'reported']),
  reason: z.string(),
});
export type ReaperEntry = z.infer<typeof ReaperEntrySchema>;

export const ReaperReportSchema = z.strictObject({
  startedAt: z.string(),
  durationMs: z.number(),
  entries: z.array(ReaperEntrySchema),
});
export type ReaperReport = z.infer<typeof ReaperReportSchema>;

export const REAPER_SCHEDULE_ID = 'ragen-reaper';
