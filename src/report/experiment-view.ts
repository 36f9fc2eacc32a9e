import { CURVE_GROUPS, type Curve, alignCurves, chartId, curveOf, seriesKeys } from './curves.js';
import { fmtGpuUsage, fmtNumber, fmtValue } from './format.js';
import type { ExperimentData, ReportOptions, SeriesOrReason } from './inputs.js';
import { buildGantt, idleTables } from './timeline.js';
import type { ChartModel, ReportModel, Section, TableModel } from './view-model.js';

/** Training curves of one series: reward, success, step time (when present), then each key asked for. */
export function trainingCurves(idPrefix: string, series: SeriesOrReason, keys: string[]): Section {
  const section: Section = { title: 'Training curves', notes: [], charts: [], tables: [] };
  if ('missing' in series) {
    section.notes.push(series.missing);
    return section;
  }
  const present = seriesKeys(series.series);
  const s = series.series;
  section.notes.push(
    `${s.points.length} points kept of the trainer's console metrics (every ${s.stride}${s.stride === 1 ? 'st' : 'th'} step, at most ${s.maxPoints}); ${present.length} keys.`,
  );
  for (const group of CURVE_GROUPS) {
    const groupKeys = present.filter((k) => group.match(k));
    if (groupKeys.length === 0) {
      section.notes.push(`No ${group.title.toLowerCase()} key in the series.`);
      continue;
    }
    section.charts.push(
      curvesChart(
        chartId(idPrefix, group.id),
        group.title,
        groupKeys.map((k) => ({ label: k, points: curveOf(s, k) })),
      ),
    );
  }
  for (const key of keys) {
    if (!present.includes(key)) {
      section.notes.push(`Key '${key}' is not in the series.`);
      continue;
    }
    section.charts.push(
      curvesChart(chartId(idPrefix, 'key', key), key, [{ label: key, points: curveOf(s, key) }]),
    );
  }
  return section;
}

function curvesChart(id: string, title: string, curves: Curve[]): ChartModel {
  return alignCurves({ id, title, xLabel: 'step', yLabel: title }, curves);
}

function validationSection(data: ExperimentData): Section {
  const v = data.manifest.validation;
  const rows: string[][] = [
    ['outcome', v.outcome],
    ...(v.error ? [['error', v.error]] : []),
    ...(v.resultsPath ? [['results file', v.resultsPath]] : []),
  ];
  const result = v.result as Record<string, unknown> | undefined;
  if (result) {
    for (const [k, value] of Object.entries(result)) {
      if (k === 'pass_at_k' && value && typeof value === 'object') {
        for (const [kk, vv] of Object.entries(value as Record<string, unknown>))
          rows.push([`pass@${kk}`, fmtValue(vv)]);
      } else if (k === 'seeds' && value && typeof value === 'object') {
        const seeds = value as { first: number; last: number };
        rows.push(['seeds', `${seeds.first}..${seeds.last}`]);
      } else rows.push([k, fmtValue(value)]);
    }
  }
  return {
    title: 'Validation',
    notes: [],
    charts: [],
    tables: [{ title: 'Validation result', header: ['field', 'value'], rows }],
  };
}

function provenanceSection(data: ExperimentData): Section {
  const m = data.manifest;
  const p = m.provenance;
  const rows: string[][] = [
    ['repository commit', `${p.repoCommit}${p.repoDirty ? ' (dirty)' : ''} (from ${p.repoSource})`],
    ...Object.entries(p.submodules).map(([k, v]) => [`submodule ${k}`, v]),
    ['model revision', p.modelRevision],
    ['orchestrator version', p.orchestratorVersion],
  ];
  if (m.commits) {
    const t = m.commits.trainedCode;
    rows.push(['trained code', [t.from, t.repository, t.commit, t.note].filter(Boolean).join(' · ')]);
    if (t.ragenCommit) rows.push(['RAGEN commit', t.ragenCommit]);
    if (t.verlCommit) rows.push(['verl commit', t.verlCommit]);
    rows.push([
      'orchestrator commit',
      `${m.commits.orchestrator.commit}${m.commits.orchestrator.dirty ? ' (dirty)' : ''}`,
    ]);
  }
  rows.push(
    [
      'image',
      m.image.ref ? `${m.image.ref}${m.image.verified ? ' (verified)' : ''}` : (m.image.note ?? 'none'),
    ],
    [
      'Ray version',
      `declared ${m.rayVersion.declared}, planned ${m.rayVersion.planned ?? '—'}, on head ${m.rayVersion.observedOnHead ?? '—'}`,
    ],
    ['seeds', `train ${m.seeds.train}, validation ${m.seeds.val}`],
    ['environment', m.environment.envTag],
    ['entrypoint', m.entrypoint.join(' ')],
    [
      'cluster',
      `${m.cluster.backend}: head ${m.cluster.shape.headCpus} CPUs; ${m.cluster.shape.workerGroups.map((g) => `${g.name} ${g.replicas} x ${g.gpusPerWorker} GPU`).join(', ')}; ${m.cluster.submits} submit(s)`,
    ],
    ['checkpoint dir', m.checkpointDir],
    ...(m.resumedFrom ? [['resumed from', m.resumedFrom]] : []),
    [
      'Temporal',
      `${m.temporal.namespace} / ${m.temporal.workflowId} / run ${m.temporal.runId} (queue ${m.temporal.taskQueue})`,
    ],
    ['manifest written', m.writtenAt],
  );
  const checkpoints: TableModel = {
    title: 'Checkpoints',
    header: ['step', 'sha256', 'files', 'bytes'],
    rows: m.checkpoints.map((c) => [
      String(c.step),
      c.sha256,
      String(c.files.length),
      String(c.files.reduce((n, f) => n + f.bytes, 0)),
    ]),
  };
  return {
    title: 'Provenance',
    notes: [],
    charts: [],
    tables: [{ title: 'Manifest', header: ['field', 'value'], rows }, checkpoints],
  };
}

function timelineSection(data: ExperimentData): Section {
  const m = data.manifest;
  const gpus = m.cluster.shape.workerGroups.reduce((n, g) => n + g.replicas * g.gpusPerWorker, 0);
  const gantt = buildGantt({
    stages: data.completeStages ?? m.stages,
    checkpoints: m.checkpoints,
    gpus,
    complete: data.completeStages !== undefined,
    backend: m.cluster.backend,
  });
  const section: Section = { title: 'Stage timeline', notes: [], charts: [], tables: [] };
  if (!gantt) {
    section.notes.push('No stage records.');
    return section;
  }
  section.gantt = gantt;
  section.notes.push(
    data.completeStages
      ? 'Stages from the workflow’s result (through teardown).'
      : 'Stages from the manifest (it is written during the archive stage, so teardown is not in it).',
  );
  section.tables.push(...idleTables(gantt, `GPU time left idle by orchestration (${gpus} GPUs)`));
  return section;
}

function metricsSummaryTable(data: ExperimentData): TableModel | undefined {
  const summary = data.manifest.metrics;
  if (!summary) return undefined;
  return {
    title: 'Metrics summary (manifest)',
    header: ['key', 'last', 'at step', 'best', 'at step', 'best is'],
    rows: Object.entries(summary).map(([k, s]) => [
      k,
      fmtNumber(s.last),
      String(s.lastStep),
      fmtNumber(s.best),
      String(s.bestStep),
      s.mode,
    ]),
  };
}

/** The experiment report: curves, the stage timeline with idle GPU time, validation, provenance. */
export function experimentReport(data: ExperimentData, options: ReportOptions): ReportModel {
  const m = data.manifest;
  const curves = trainingCurves('exp', data.series, options.keys);
  const summary = metricsSummaryTable(data);
  if (summary) curves.tables.push(summary);
  else curves.notes.push('The manifest has no metrics summary (runs archived before it existed).');
  return {
    kind: 'experiment',
    title: `Experiment ${m.experiment}`,
    subtitle: m.temporal.workflowId,
    facts: [
      ['outcome', m.outcome],
      [
        'training',
        `${m.training.outcome}, step ${m.training.finalStep ?? '—'} of ${m.training.totalTrainingSteps}${m.training.error ? `: ${m.training.error}` : ''}`,
      ],
      [
        'validation success',
        fmtNumber((m.validation.result as { success_rate?: number } | undefined)?.success_rate),
      ],
      ['backend', m.cluster.backend],
      ['GPU-hours', fmtGpuUsage(m.gpuUsage)],
      ['archive folder', data.dir],
    ],
    sections: [curves, timelineSection(data), validationSection(data), provenanceSection(data)],
  };
}
