import type { MetricsSeries } from '../domain/train/metrics-series.js';
import type { ChartModel } from './view-model.js';

/** One curve before alignment: (step, value) pairs in step order. */
export interface Curve {
  label: string;
  points: [number, number][];
  faint?: boolean;
  /** Open x intervals where the line breaks (no data there), e.g. (300, 601). */
  gaps?: [number, number][];
}

/** The default charts and how their keys are found among the trainer's metrics. */
export const CURVE_GROUPS = [
  {
    id: 'reward',
    title: 'Reward',
    // verl's critic/score/mean (RAGEN's episode score) or critic/rewards/mean; else any */reward/mean.
    match: (k: string) =>
      /^critic\/(score|rewards)\/mean$/.test(k) || /(^|\/)reward(s)?\/mean(@\d+)?$/.test(k),
  },
  { id: 'success', title: 'Success', match: (k: string) => /(^|\/)success$/.test(k) },
  { id: 'step-time', title: 'Step time (s)', match: (k: string) => k === 'timing_s/step' },
] as const;

/** Every key that appears in the series, sorted. */
export function seriesKeys(series: MetricsSeries): string[] {
  const keys = new Set<string>();
  for (const p of series.points) for (const k of Object.keys(p.values)) keys.add(k);
  return [...keys].sort();
}

/** The (step, value) pairs of one key, finite values only, in step order. */
export function curveOf(series: MetricsSeries, key: string): [number, number][] {
  const out: [number, number][] = [];
  for (const p of series.points) {
    const v = p.values[key];
    if (v !== undefined && Number.isFinite(v)) out.push([p.step, v]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** The first key of a default group present in the series, e.g. the reward key. */
export function firstKeyOfGroup(
  keys: string[],
  groupId: (typeof CURVE_GROUPS)[number]['id'],
): string | undefined {
  const group = CURVE_GROUPS.find((g) => g.id === groupId)!;
  return keys.find((k) => group.match(k));
}

/** Curves on one shared x axis (the union of their steps); a curve without a point at x gets null. */
export function alignCurves(
  base: Omit<ChartModel, 'x' | 'series' | 'kind'> & { kind?: ChartModel['kind'] },
  curves: Curve[],
): ChartModel {
  // Each gap gets an x of its own inside it, so the chart has a place to break the line.
  const mids = curves.flatMap((c) => (c.gaps ?? []).map(([a, b]) => (a + b) / 2));
  const xs = [...new Set([...curves.flatMap((c) => c.points.map((p) => p[0])), ...mids])].sort(
    (a, b) => a - b,
  );
  const index = new Map(xs.map((x, i) => [x, i]));
  const series = curves.map((c) => {
    const values: (number | null)[] = new Array<number | null>(xs.length).fill(null);
    for (const [x, y] of c.points) values[index.get(x)!] = y;
    const gaps = c.gaps ?? [];
    return { label: c.label, values, ...(c.faint ? { faint: true } : {}), ...(gaps.length ? { gaps } : {}) };
  });
  return { kind: 'line', ...base, x: xs, series };
}

/** A chart id safe in HTML ids and selectors. */
export function chartId(...parts: string[]): string {
  return parts.join('-').replace(/[^A-Za-z0-9_-]+/g, '_');
}
