import { z } from 'zod';
import type { StageRecord } from '../run/results.js';

/** `cost:` in a spec: what one GPU-hour costs, to turn GPU-seconds into money in the manifests. */
export const CostSchema = z.strictObject({
  pricePerGpuHour: z.number().min(0, 'a price per GPU-hour cannot be negative; write 0 or more'),
  /** A label only (USD, EUR, credits); nothing is converted. */
  currency: z.string().min(1).default('USD'),
});
export type Cost = z.infer<typeof CostSchema>;

/**
 * GPU time of one run (or the sum of several). allocatedSeconds: cluster GPUs x the time a
 * cluster existed (each submit's start to its teardown's end, less a Kueue queue's wait); busySeconds: GPUs x train-stage time.
 * Optional everywhere it is recorded, so manifests written before it still parse.
 */
export const GpuUsageSchema = z.strictObject({
  gpus: z.number().min(0),
  allocatedSeconds: z.number().min(0),
  busySeconds: z.number().min(0),
  allocatedGpuHours: z.number().min(0),
  /** A cluster still held when this was computed (the manifest is written before teardown) counts up to this time. */
  openUntil: z.string().optional(),
  cost: z
    .strictObject({ pricePerGpuHour: z.number(), currency: z.string(), allocated: z.number() })
    .optional(),
});
export type GpuUsage = z.infer<typeof GpuUsageSchema>;

function seconds(from: string, to: string): number {
  const s = (Date.parse(to) - Date.parse(from)) / 1000;
  return Number.isFinite(s) && s > 0 ? s : 0;
}
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A stretch of time, ISO 8601 at both ends. */
export interface Span {
  from: string;
  to: string;
}

/**
 * The clusters of an experiment (pure): each from the start of a `submit` stage to the end of the
 * `teardown` of the same attempt; one with no finished teardown yet lasts until `now` (open). A
 * cluster waiting in a Kueue queue (stage `queued`) is suspended and holds no GPUs: that wait is cut out.
 */
export function clusterSpans(stages: readonly StageRecord[], now: string): { spans: Span[]; open: boolean } {
  let open = false;
  const spans = stages
    .filter((s) => s.stage === 'submit')
    .flatMap((submit) => {
      const down = stages.find(
        (s) => s.stage === 'teardown' && s.attempt === submit.attempt && s.startedAt >= submit.startedAt,
      );
      if (!down?.endedAt) open = true;
      const queued = stages
        .filter(
          (s) => s.stage === 'queued' && s.attempt === submit.attempt && s.startedAt >= submit.startedAt,
        )
        .map((s) => ({ from: s.startedAt, to: s.endedAt ?? now }));
      return withoutSpans({ from: submit.startedAt, to: down?.endedAt ?? now }, queued);
    });
  return { spans, open };
}

/** `span` less the `cuts` (ISO strings of one format compare in time order). */
function withoutSpans(span: Span, cuts: readonly Span[]): Span[] {
  let pieces = [span];
  for (const cut of cuts) {
    pieces = pieces.flatMap((p) => {
      if (cut.to <= p.from || cut.from >= p.to) return [p];
      const kept: Span[] = [];
      if (cut.from > p.from) kept.push({ from: p.from, to: cut.from });
      if (cut.to < p.to) kept.push({ from: cut.to, to: p.to });
      return kept;
    });
  }
  return pieces;
}

/** The `train` stages (pure); an unfinished one lasts until `now`. */
export function trainSpans(stages: readonly StageRecord[], now: string): Span[] {
  return stages.filter((s) => s.stage === 'train').map((s) => ({ from: s.startedAt, to: s.endedAt ?? now }));
}

const spanSeconds = (spans: readonly Span[]) => spans.reduce((sum, s) => sum + seconds(s.from, s.to), 0);

/**
 * GPU time from an experiment's stage records (pure): GPUs x the clusters' time (clusterSpans) is
 * allocated, GPUs x the train stages' time (trainSpans) is busy.
 */
export function gpuUsageOfStages(
  stages: readonly StageRecord[],
  gpus: number,
  now: string,
  cost?: Cost,
): GpuUsage {
  const clusters = clusterSpans(stages, now);
  return withCost(
    {
      gpus,
      allocatedSeconds: round(gpus * spanSeconds(clusters.spans), 3),
      busySeconds: round(gpus * spanSeconds(trainSpans(stages, now)), 3),
      allocatedGpuHours: 0,
      ...(clusters.open ? { openUntil: now } : {}),
    },
    cost,
  );
}

/** The sum of several runs' usage (a sweep's children, a campaign's attempts); gpus is the largest shape. */
export function sumGpuUsage(parts: readonly (GpuUsage | undefined)[], cost?: Cost): GpuUsage {
  const known = parts.filter((p): p is GpuUsage => p !== undefined);
  return withCost(
    {
      gpus: known.reduce((m, p) => Math.max(m, p.gpus), 0),
      allocatedSeconds: round(
        known.reduce((s, p) => s + p.allocatedSeconds, 0),
        3,
      ),
      busySeconds: round(
        known.reduce((s, p) => s + p.busySeconds, 0),
        3,
      ),
      allocatedGpuHours: 0,
    },
    cost,
  );
}

function withCost(usage: GpuUsage, cost: Cost | undefined): GpuUsage {
  const hours = usage.allocatedSeconds / 3600;
  return {
    ...usage,
    allocatedGpuHours: round(hours, 6),
    ...(cost
      ? {
          cost: {
            pricePerGpuHour: cost.pricePerGpuHour,
            currency: cost.currency,
            allocated: round(hours * cost.pricePerGpuHour, 4),
          },
        }
      : {}),
  };
}
