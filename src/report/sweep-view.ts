import type { SweepRow } from '../domain/sweep/sweep.js';
import { type Curve, alignCurves, chartId, curveOf, firstKeyOfGroup, seriesKeys } from './curves.js';
import { fmtGpuUsage, fmtNumber, fmtValue } from './format.js';
import type { ReportOptions, SweepData } from './inputs.js';
import type { ChartModel, ReportModel, Section } from './view-model.js';

const objectiveOf = (r: SweepRow): number | undefined => r.successRate;

/** One scatter per parameter: its value (numbers as they are, other values as categories) against the objective. */
function parameterScatter(rows: SweepRow[], key: string, objective: string): ChartModel {
  const valued = rows.filter((r) => objectiveOf(r) !== undefined && r.params[key] !== undefined);
  const numeric = valued.every((r) => typeof r.params[key] === 'number');
  const categories = numeric ? undefined : [...new Set(valued.map((r) => String(r.params[key])))].sort();
  const pairs: [number, number][] = valued.map((r) => [
    numeric ? (r.params[key] as number) : categories!.indexOf(String(r.params[key])),
    objectiveOf(r)!,
  ]);
  pairs.sort((a, b) => a[0] - b[0]);
  return {
    id: chartId('param', key),
    title: `${key} against ${objective}`,
    kind: 'points',
    xLabel: key,
    yLabel: objective,
    x: pairs.map((p) => p[0]),
    series: [{ label: objective, values: pairs.map((p) => p[1]) }],
    ...(categories ? { xCategories: categories } : {}),
  };
}

type SweepManifestOf = SweepData['manifest'];
type ChildRow = SweepManifestOf['children'][number];

/** Objective per child, and each swept parameter against it. */
function objectiveSection(m: SweepManifestOf, paramKeys: string[]): Section {
  const rows = m.children;
  const overview: Section = { title: 'Objective', notes: [], charts: [], tables: [] };
  const valued = [...rows].sort((a, b) => a.index - b.index).filter((r) => objectiveOf(r) !== undefined);
  if (valued.length === 0) overview.notes.push('No child has a value of the objective.');
  else {
    overview.charts.push({
      id: 'objective',
      title: `${m.objective.metric} per child`,
      kind: 'bars',
      xLabel: 'child index',
      yLabel: m.objective.metric,
      x: valued.map((r) => r.index),
      series: [{ label: m.objective.metric, values: valued.map((r) => objectiveOf(r)!) }],
    });
    for (const key of paramKeys) overview.charts.push(parameterScatter(rows, key, m.objective.metric));
  }
  const without = rows.length - valued.length;
  if (without > 0)
    overview.notes.push(
      `${without} of ${rows.length} children have no objective value (failed, cancelled, pruned or early-stopped).`,
    );
  return overview;
}

/** The top children's training curves, aligned by step, for the chosen (or found) keys. */
function curvesSection(data: SweepData, options: ReportOptions): Section {
  const curves: Section = {
    title: `Curves of the top ${options.top} children`,
    notes: [],
    charts: [],
    tables: [],
  };
  const top = data.manifest.children.filter((r) => r.rank !== undefined).slice(0, options.top);
  const seriesById = new Map(data.children.map((c) => [c.workflowId, c.series]));
  const available = top.flatMap((r) => {
    const s = seriesById.get(r.workflowId);
    if (!s || 'missing' in s) {
      curves.notes.push(`#${r.rank} ${r.workflowId}: ${s && 'missing' in s ? s.missing : 'no series read'}`);
      return [];
    }
    return [{ row: r, series: s.series }];
  });
  const allKeys = [...new Set(available.flatMap((a) => seriesKeys(a.series)))].sort();
  const keys = options.keys.length
    ? options.keys
    : [firstKeyOfGroup(allKeys, 'reward'), firstKeyOfGroup(allKeys, 'success')].filter(
        (k): k is string => !!k,
      );
  if (available.length && keys.length === 0)
    curves.notes.push('No reward or success key in the children’s series; name one with --key.');
  for (const key of keys) {
    const list: Curve[] = available
      .map((a) => ({ label: `#${a.row.rank} child ${a.row.index}`, points: curveOf(a.series, key) }))
      .filter((c) => c.points.length > 0);
    if (list.length === 0) {
      curves.notes.push(`Key '${key}' is in none of the top children’s series.`);
      continue;
    }
    curves.charts.push(
      alignCurves({ id: chartId('top', key), title: key, xLabel: 'step', yLabel: key }, list),
    );
  }
  return curves;
}

/** Every child, best first, with its parameters and error. */
function rankedSection(m: SweepManifestOf, paramKeys: string[]): Section {
  const rows: ChildRow[] = m.children;
  return {
    title: 'Ranked children',
    notes: [],
    charts: [],
    tables: [
      {
        title: `${rows.length} children, best first`,
        header: ['rank', 'index', 'outcome', m.objective.metric, ...paramKeys, 'workflow id', 'error'],
        rows: rows.map((r) => [
          r.rank === undefined ? '—' : String(r.rank),
          String(r.index),
          r.outcome,
          fmtNumber(objectiveOf(r)),
          ...paramKeys.map((k) => fmtValue(r.params[k])),
          r.workflowId,
          r.error ?? '',
        ]),
      },
    ],
  };
}

/** The sweep report: objective per child, parameters against the objective, top children's curves, the ranked table. */
export function sweepReport(data: SweepData, options: ReportOptions): ReportModel {
  const m = data.manifest;
  const objective = `${m.objective.metric} (${m.objective.direction})`;
  const paramKeys = [...new Set(m.children.flatMap((r) => Object.keys(r.params)))];
  return {
    kind: 'sweep',
    title: `Sweep ${m.sweep}`,
    subtitle: m.temporal.workflowId,
    facts: [
      ['outcome', m.outcome],
      ['objective', objective],
      [
        'children',
        `${m.counts.total}: ${m.counts.succeeded} succeeded, ${m.counts.failed} failed, ${m.counts.cancelled} cancelled, ${m.counts.pruned ?? 0} pruned, ${m.counts.notStarted} not started`,
      ],
      ['stopped by failure budget', m.stoppedByFailureBudget ? 'yes' : 'no'],
      ['GPU-hours', fmtGpuUsage(m.gpuUsage)],
      ['archive folder', data.dir],
      ['written', m.writtenAt],
    ],
    sections: [objectiveSection(m, paramKeys), curvesSection(data, options), rankedSection(m, paramKeys)],
  };
}
