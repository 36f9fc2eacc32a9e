import { z } from 'zod';
import { workerGpus } from '../spec/experiment.js';
import { type Span, clusterSpans, gpuUsageOfStages, trainSpans } from './gpu-usage.js';
import type { Manifest } from '../run/manifest.js';
import type { Ownership } from './ownership.js';

/**
 * GPU usage over time (`usage`), pure. Only experiments are counted: a campaign's attempts and a
 * sweep's children are experiments, and the campaign's and sweep's own GPU figures are sums of
 * theirs, so counting experiments counts each GPU-second once.
 *
 * Figures are integer milli-GPU-seconds (the manifests round GPU-seconds to 3 decimals), so a run
 * split across buckets and the buckets summed give back the manifests' totals exactly.
 */

export const UsageBucketSchema = z.enum(['day', 'week'], { message: 'expected day or week' });
export type UsageBucket = z.infer<typeof UsageBucketSchema>;

/** One experiment as the usage report counts it. */
export interface RunUsage {
  workflowId: string;
  owner: string;
  team: string;
  running: boolean;
  /** Milli-GPU-seconds: the manifest's figure, or GPUs x the time since the start while it runs. */
  allocatedMs: number;
  busyMs: number;
  /** When that time was spent, to split it across buckets in proportion. */
  allocatedSpans: Span[];
  busySpans: Span[];
  /** The run's own price (spec `cost:`), if it has one. */
  price?: { pricePerGpuHour: number; currency: string };
}

const toMs = (seconds: number) => Math.round(seconds * 1000);
const MS_PER_HOUR = 3_600_000;

/** A closed experiment from its manifest: its gpuUsage, or (older manifests) the same rule over its stages. */
export function runUsageOfManifest(
  m: Pick<Manifest, 'temporal' | 'stages' | 'gpuUsage' | 'resolvedSpec' | 'writtenAt'>,
  who: Partial<Ownership> = {},
): RunUsage {
  const now = m.gpuUsage?.openUntil ?? m.writtenAt;
  const usage = m.gpuUsage ?? gpuUsageOfStages(m.stages, workerGpus(m.resolvedSpec), now);
  const cost = m.gpuUsage?.cost ?? m.resolvedSpec.cost;
  return {
    workflowId: m.temporal.workflowId,
    owner: who.owner ?? m.resolvedSpec.owner ?? '-',
    team: who.team ?? m.resolvedSpec.team ?? '-',
    running: false,
    allocatedMs: toMs(usage.allocatedSeconds),
    busyMs: toMs(usage.busySeconds),
    allocatedSpans: clusterSpans(m.stages, now).spans,
    busySpans: trainSpans(m.stages, now),
    ...(cost ? { price: { pricePerGpuHour: cost.pricePerGpuHour, currency: cost.currency } } : {}),
  };
}

/**
 * A running experiment: its GPUs from its start to now (the manifest comes when it ends, and the
 * cluster's own start is not in visibility). Busy time is not known before the manifest: 0.
 */
export function runUsageWhileRunning(r: {
  workflowId: string;
  owner: string;
  team: string;
  startedAt: string;
  gpus: number;
  now: string;
  price?: RunUsage['price'];
}): RunUsage {
  const ms = Math.max(0, Date.parse(r.now) - Date.parse(r.startedAt));
  return {
    workflowId: r.workflowId,
    owner: r.owner,
    team: r.team,
    running: true,
    allocatedMs: r.gpus * ms,
    busyMs: 0,
    allocatedSpans: [{ from: r.startedAt, to: r.now }],
    busySpans: [],
    ...(r.price ? { price: r.price } : {}),
  };
}

/**
 * A closed experiment with no manifest (it ended before its archive stage, or was terminated): the
 * allocated GPU-seconds its search attribute RagenGpuSeconds holds, spread over its start to close.
 */
export function runUsageWithoutManifest(r: {
  workflowId: string;
  owner: string;
  team: string;
  startedAt: string;
  closedAt: string;
  gpuSeconds: number;
}): RunUsage {
  return {
    workflowId: r.workflowId,
    owner: r.owner,
    team: r.team,
    running: false,
    allocatedMs: toMs(r.gpuSeconds),
    busyMs: 0,
    allocatedSpans: [{ from: r.startedAt, to: r.closedAt }],
    busySpans: [],
  };
}

/** The start of the UTC day, or of the ISO week (Monday 00:00 UTC), holding `t` (ms since the epoch). */
export function bucketStart(t: number, by: UsageBucket): number {
  const d = new Date(t);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (by === 'day') return day;
  return day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
}

function nextBucket(start: number, by: UsageBucket): number {
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + (by === 'day' ? 1 : 7));
}

/** Milliseconds of the spans before `t`. */
function timeBefore(spans: readonly { from: number; to: number }[], t: number): number {
  return spans.reduce((sum, s) => sum + Math.max(0, Math.min(s.to, t) - s.from), 0);
}

/**
 * `total` split over buckets in proportion to the spans' time in each, within [since, until).
 * Each bucket gets round(total x time up to its end / all time) minus the same at its start, so the
 * pieces are integers that add up to the total exactly when the spans lie inside the window.
 * Spans of no length (a total with no time recorded) put the whole total at their first start.
 */
function split(
  total: number,
  spansIso: readonly Span[],
  window: { since: number; until: number },
  by: UsageBucket,
): Map<number, number> {
  const pieces = new Map<number, number>();
  if (total === 0 || spansIso.length === 0) return pieces;
  const spans = spansIso.map((s) => ({
    from: Date.parse(s.from),
    to: Math.max(Date.parse(s.from), Date.parse(s.to)),
  }));
  const all = timeBefore(spans, Infinity);
  if (all === 0) {
    const at = Math.min(...spans.map((s) => s.from));
    if (at >= window.since && at < window.until) pieces.set(bucketStart(at, by), total);
    return pieces;
  }
  const upTo = (t: number) => Math.round((total * timeBefore(spans, t)) / all);
  const first = Math.max(window.since, Math.min(...spans.map((s) => s.from)));
  const last = Math.min(window.until, Math.max(...spans.map((s) => s.to)));
  for (let b = bucketStart(first, by); b < last; b = nextBucket(b, by)) {
    const piece = upTo(Math.min(nextBucket(b, by), window.until)) - upTo(Math.max(b, window.since));
    if (piece !== 0) pieces.set(b, piece);
  }
  return pieces;
}

/** One line of the report: one bucket, one team, one owner. Costs in the rows' currency. */
export interface UsageRow {
  bucket: string;
  team: string;
  owner: string;
  /** Experiments with allocated or busy time in this bucket; `running` of them still run. */
  runs: number;
  running: number;
  allocatedMs: number;
  busyMs: number;
  cost?: number;
}

export interface UsageReport {
  since: string;
  until: string;
  by: UsageBucket;
  rows: UsageRow[];
  total: Omit<UsageRow, 'bucket' | 'team' | 'owner'>;
  /** Set when any run has a price (or one was given for all): the cost columns' currency. */
  currency?: string;
}

export interface UsageOptions {
  since: string;
  until: string;
  by: UsageBucket;
  /** --price-per-gpu-hour: one price for every run, over the runs' own. */
  price?: { pricePerGpuHour: number; currency: string };
}

/**
 * The report (pure): each run's allocated and busy time split across buckets (UTC days or ISO
 * weeks) and summed by bucket, team and owner. Time outside [since, until) is left out. Costs
 * are priced per run; runs of different currencies and no --price-per-gpu-hour are refused.
 */
export function aggregateUsage(runs: readonly RunUsage[], o: UsageOptions): UsageReport {
  const window = { since: Date.parse(o.since), until: Date.parse(o.until) };
  const priceOf = (r: RunUsage) => o.price ?? r.price;
  const currencies = new Set(runs.map((r) => priceOf(r)?.currency).filter((c) => c !== undefined));
  if (currencies.size > 1)
    throw new Error(
      `the runs are priced in ${[...currencies].join(' and ')}: give --price-per-gpu-hour (and --currency) to price them all alike`,
    );
  const currency = [...currencies][0];
  // Runs are counted by id, once per row and once in the total, however many buckets they span.
  type Summing = Omit<UsageRow, 'runs' | 'running'> & { ids: Set<string>; runningIds: Set<string> };
  const rows = new Map<string, Summing>();
  const total = { allocatedMs: 0, busyMs: 0, cost: 0 };
  const counted = new Set<string>();
  const countedRunning = new Set<string>();
  for (const r of runs) {
    const allocated = split(r.allocatedMs, r.allocatedSpans, window, o.by);
    const busy = split(r.busyMs, r.busySpans, window, o.by);
    const price = priceOf(r)?.pricePerGpuHour;
    for (const b of new Set([...allocated.keys(), ...busy.keys()])) {
      const bucket = new Date(b).toISOString().slice(0, 10);
      const key = `${bucket}\u0000${r.team}\u0000${r.owner}`;
      let row = rows.get(key);
      if (!row) {
        row = {
          bucket,
          team: r.team,
          owner: r.owner,
          allocatedMs: 0,
          busyMs: 0,
          ids: new Set(),
          runningIds: new Set(),
        };
        if (currency) row.cost = 0;
        rows.set(key, row);
      }
      const a = allocated.get(b) ?? 0;
      row.allocatedMs += a;
      row.busyMs += busy.get(b) ?? 0;
      if (row.cost !== undefined && price !== undefined) row.cost += (a * price) / MS_PER_HOUR;
      row.ids.add(r.workflowId);
      counted.add(r.workflowId);
      if (r.running) {
        row.runningIds.add(r.workflowId);
        countedRunning.add(r.workflowId);
      }
    }
  }
  const out = [...rows.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) // bucket, then team, then owner
    .map(([, row]) => row)
    .map(({ ids, runningIds, bucket, team, owner, ...sums }): UsageRow => {
      total.allocatedMs += sums.allocatedMs;
      total.busyMs += sums.busyMs;
      total.cost += sums.cost ?? 0;
      return { bucket, team, owner, runs: ids.size, running: runningIds.size, ...sums };
    });
  const { cost, ...sums } = total;
  const counts = { runs: counted.size, running: countedRunning.size, ...sums };
  return {
    since: o.since,
    until: o.until,
    by: o.by,
    rows: out,
    total: currency ? { ...counts, cost } : counts,
    ...(currency ? { currency } : {}),
  };
}

/** Milli-GPU-seconds as GPU-hours. */
export const gpuHours = (ms: number): number => ms / MS_PER_HOUR;
