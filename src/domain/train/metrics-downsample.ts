import type { MetricSummary, MetricsPoint, MetricsSeries, MetricsSummary } from './metrics-series.js';

/** Default bound of a run's series: enough for a smooth curve, a few hundred KB at most. */
export const DEFAULT_MAX_POINTS = 2000;

export function emptySeries(maxPoints = DEFAULT_MAX_POINTS): MetricsSeries {
  if (maxPoints < 4)
    throw new Error(`maxPoints must be at least 4 (first, last and two between), got ${maxPoints}`);
  return { schemaVersion: 1, maxPoints, stride: 1, points: [] };
}

/**
 * Add one step's values to a bounded series (pure: returns a new series). Kept: the first point,
 * steps that are multiples of `stride`, and the latest step. When the points would exceed
 * `maxPoints`, `stride` doubles and the points off the new stride are dropped, so a run of any
 * length keeps an evenly thinned curve of at most `maxPoints` points.
 * A repeated step merges its values (verl prints validation and training metrics of one step on
 * separate lines); a step below the latest (a restart from an earlier checkpoint) replaces the
 * points from that step on.
 */
export function addPoint(series: MetricsSeries, point: MetricsPoint): MetricsSeries {
  let points = series.points.filter((p) => p.step < point.step);
  const same = series.points.find((p) => p.step === point.step);
  const last = points.at(-1);
  // The previous latest step was kept only because it was the latest.
  if (last && points.length > 1 && last.step % series.stride !== 0) points = points.slice(0, -1);
  points.push(same ? { step: point.step, values: { ...same.values, ...point.values } } : point);
  let stride = series.stride;
  while (points.length > series.maxPoints) {
    stride *= 2;
    const s = stride;
    points = points.filter((p, i) => i === 0 || i === points.length - 1 || p.step % s === 0);
  }
  return { ...series, stride, points };
}

/**
 * Whether a larger value of `key` is better: losses, times and lengths are better small, anything
 * else (reward, success, score, pass@k) large. The one place this rule lives.
 */
export function metricMode(key: string): MetricSummary['mode'] {
  return /loss|time|timing|latency|duration|(^|[/_])len(gth)?([/_]|$)|length/i.test(key) ? 'min' : 'max';
}

/** Fold one step's values into the per-key summary (last and best with their steps); pure. */
export function updateSummary(
  summary: MetricsSummary,
  step: number,
  values: Record<string, number>,
): MetricsSummary {
  const next: MetricsSummary = { ...summary };
  for (const [key, value] of Object.entries(values)) {
    const before = next[key];
    const mode = before?.mode ?? metricMode(key);
    const better = !before || (mode === 'max' ? value > before.best : value < before.best);
    next[key] = {
      last: value,
      lastStep: step,
      best: better ? value : before.best,
      bestStep: better ? step : before.bestStep,
      mode,
    };
  }
  return next;
}
