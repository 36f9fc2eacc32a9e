import { type UsageReport, gpuHours } from '../domain/usage/usage.js';
import { fmtNumber } from './format.js';
import { loadReportAssets } from './report-assets.js';
import { renderReportHtml } from './render-html.js';
import type { ChartModel, ReportModel } from './view-model.js';

/**
 * `usage --format html` (pure view model): allocated and busy GPU-hours per bucket as bars (busy
 * drawn over allocated: it is a part of it), allocated GPU-hours per team per bucket, the rows as a table.
 */
export function usageReportModel(r: UsageReport, filters: { team?: string; owner?: string }): ReportModel {
  const buckets = [...new Set(r.rows.map((row) => row.bucket))];
  const x = buckets.map((_, i) => i);
  const sum = (rows: typeof r.rows, key: 'allocatedMs' | 'busyMs') =>
    buckets.map((b) => gpuHours(rows.filter((row) => row.bucket === b).reduce((s, row) => s + row[key], 0)));
  const teams = [...new Set(r.rows.map((row) => row.team))].sort();
  const charts: ChartModel[] = [
    {
      id: 'usage-gpu-hours',
      title: `GPU-hours per ${r.by} (UTC)`,
      kind: 'bars',
      xLabel: r.by,
      yLabel: 'GPU-hours',
      x,
      xCategories: buckets,
      series: [
        { label: 'allocated', values: sum(r.rows, 'allocatedMs') },
        { label: 'busy (training)', values: sum(r.rows, 'busyMs') },
      ],
    },
    {
      id: 'usage-teams',
      title: `allocated GPU-hours per team and ${r.by}`,
      kind: 'line',
      xLabel: r.by,
      yLabel: 'GPU-hours',
      x,
      xCategories: buckets,
      series: teams.map((team) => ({
        label: team,
        values: sum(
          r.rows.filter((row) => row.team === team),
          'allocatedMs',
        ),
      })),
    },
  ];
  const hours = (ms: number) => fmtNumber(gpuHours(ms), 4);
  const cost = (v: number | undefined) => (v === undefined ? [] : [v.toFixed(2)]);
  return {
    kind: 'usage',
    title: 'GPU usage',
    subtitle: `${r.since} to ${r.until}, by ${r.by}`,
    facts: [
      ['team', filters.team ?? 'all'],
      ['owner', filters.owner ?? 'all'],
      ['experiments', `${r.total.runs} (${r.total.running} running, counted up to the report's time)`],
      ['allocated GPU-hours', hours(r.total.allocatedMs)],
      ['busy GPU-hours', hours(r.total.busyMs)],
      ...(r.currency && r.total.cost !== undefined
        ? [[`cost (${r.currency})`, r.total.cost.toFixed(2)] as [string, string]]
        : []),
    ],
    sections: [
      {
        title: 'GPU-hours',
        notes: [
          'Allocated: GPUs x the time each cluster existed; busy: GPUs x training time. A run spanning buckets is split by its time in each; a running one counts from its start to now.',
        ],
        charts: buckets.length > 0 ? charts : [],
        tables: [
          {
            title: 'by bucket, team and owner',
            header: [
              r.by,
              'team',
              'owner',
              'runs',
              'running',
              'allocated GPU-h',
              'busy GPU-h',
              ...(r.currency ? [`cost ${r.currency}`] : []),
            ],
            rows: r.rows.map((row) => [
              row.bucket,
              row.team,
              row.owner,
              String(row.runs),
              String(row.running),
              hours(row.allocatedMs),
              hours(row.busyMs),
              ...cost(row.cost),
            ]),
          },
        ],
      },
    ],
  };
}

/** The whole page, self-contained like the run reports (uPlot inlined, opens offline). */
export async function usageHtml(
  r: UsageReport,
  filters: { team?: string; owner?: string },
  now: Date,
): Promise<string> {
  return renderReportHtml(usageReportModel(r, filters), await loadReportAssets(), now.toISOString());
}
