import { type UsageReport, type UsageRow, gpuHours } from '../domain/usage/usage.js';
import { fmtGpuHours } from './list.js';
import { alignedTable } from './text-table.js';

/** `usage --format`: the text forms; html is src/report/usage-view.ts. */
export type UsageFormat = 'table' | 'csv' | 'json' | 'html';

type Counts = Omit<UsageRow, 'bucket' | 'team' | 'owner'>;

// Exact figures for machines (GPU-seconds to the millisecond, hours unrounded); the table rounds.
const exactSeconds = (ms: number) => ms / 1000;
const money = (v: number | undefined) => (v === undefined ? '' : v.toFixed(2));

function cells(c: Counts, pretty: boolean): string[] {
  const hours = (ms: number) => (pretty ? fmtGpuHours(exactSeconds(ms)) : String(gpuHours(ms)));
  const busyShare = c.allocatedMs > 0 ? `${Math.round((100 * c.busyMs) / c.allocatedMs)}%` : '-';
  return [
    String(c.runs),
    String(c.running),
    hours(c.allocatedMs),
    hours(c.busyMs),
    ...(pretty ? [busyShare] : []),
    ...(c.cost === undefined ? [] : [money(c.cost)]),
  ];
}

function header(r: UsageReport, pretty: boolean): string[] {
  const names = pretty
    ? ['RUNS', 'RUNNING', 'ALLOCATED GPU-H', 'BUSY GPU-H', 'BUSY %']
    : ['runs', 'running', 'allocated_gpu_hours', 'busy_gpu_hours'];
  const cost = r.currency ? [pretty ? `COST ${r.currency}` : `cost_${r.currency}`] : [];
  return [...(pretty ? ['BUCKET', 'TEAM', 'OWNER'] : ['bucket', 'team', 'owner']), ...names, ...cost];
}

/** An aligned table, a TOTAL line last (runs counted once even when they span buckets). */
export function usageTable(r: UsageReport): string {
  const rows = r.rows.map((row) => [row.bucket, row.team, row.owner, ...cells(row, true)]);
  rows.push(['TOTAL', '', '', ...cells(r.total, true)]);
  return alignedTable(header(r, true), rows);
}

const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** One line per row and no total line (a spreadsheet sums it); hours unrounded. */
export function usageCsv(r: UsageReport): string {
  const lines = [
    header(r, false),
    ...r.rows.map((row) => [row.bucket, row.team, row.owner, ...cells(row, false)]),
  ];
  return `${lines.map((l) => l.map(csvCell).join(',')).join('\n')}\n`;
}

/** The report with GPU-hours and GPU-seconds next to the integer milli-GPU-seconds it is summed in. */
export function usageJson(r: UsageReport, leftOut: { workflowId: string; reason: string }[]): string {
  const figures = (c: Counts) => ({
    ...c,
    allocatedGpuHours: gpuHours(c.allocatedMs),
    busyGpuHours: gpuHours(c.busyMs),
    allocatedGpuSeconds: exactSeconds(c.allocatedMs),
    busyGpuSeconds: exactSeconds(c.busyMs),
  });
  return `${JSON.stringify({ ...r, rows: r.rows.map((row) => ({ ...row, ...figures(row) })), total: figures(r.total), leftOut }, null, 2)}\n`;
}
