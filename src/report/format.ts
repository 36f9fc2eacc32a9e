import type { GpuUsage } from '../domain/usage/gpu-usage.js';

/** Short, plain renderings of values for tables (escaped later by the renderer). */
export function fmtNumber(v: number | undefined | null, digits = 4): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '—';
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(digits)));
}

export function fmtSeconds(s: number): string {
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(2)} h`;
}

export function fmtValue(v: unknown): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'number') return fmtNumber(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** A manifest's GPU usage as one line: allocated GPU-hours, busy GPU-hours, and the cost where priced. */
export function fmtGpuUsage(u: GpuUsage | undefined): string {
  if (!u) return '— (not recorded: a manifest from before GPU-hours were counted)';
  const hours = (s: number) => fmtNumber(s / 3600, 3);
  const cost = u.cost
    ? `; cost ${fmtNumber(u.cost.allocated, 4)} ${u.cost.currency} at ${u.cost.pricePerGpuHour}/GPU-hour`
    : '';
  return `${hours(u.allocatedSeconds)} allocated (${u.gpus} GPUs), ${hours(u.busySeconds)} busy training${cost}`;
}
