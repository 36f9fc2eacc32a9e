import { z } from 'zod';

/**
 * The trainer's numeric metrics per step, kept compact on storage next to the manifest
 * (`metrics-series.json`). Written by the train activity (from the console lines), read by
 * `report`, trackers and the manifest's summary. Bounded: when `points` would exceed
 * `maxPoints`, every other kept point is dropped and `stride` doubles, so a long run keeps an
 * evenly thinned curve (the first and last steps are always kept).
 */
export const MetricsPointSchema = z.strictObject({
  step: z.number().int().nonnegative(),
  values: z.record(z.string(), z.number()),
});
export type MetricsPoint = z.infer<typeof MetricsPointSchema>;

export const MetricsSeriesSchema = z.strictObject({
  schemaVersion: z.literal(1),
  maxPoints: z.number().int().positive(),
  /** Steps kept are multiples of `stride` (plus the last step seen). */
  stride: z.number().int().positive(),
  points: z.array(MetricsPointSchema),
});
export type MetricsSeries = z.infer<typeof MetricsSeriesSchema>;

/** Per key: the last value and the best one (by `mode`), each with its step. */
export const MetricSummarySchema = z.strictObject({
  last: z.number(),
  lastStep: z.number().int(),
  best: z.number(),
  bestStep: z.number().int(),
  mode: z.enum(['max', 'min']),
});
export type MetricSummary = z.infer<typeof MetricSummarySchema>;
export const MetricsSummarySchema = z.record(z.string(), MetricSummarySchema);
export type MetricsSummary = z.infer<typeof MetricsSummarySchema>;
