import type { AttemptRecord } from '../domain/campaign/campaign.js';
import { CURVE_GROUPS, type Curve, alignCurves, chartId, curveOf, seriesKeys } from './curves.js';
import { fmtGpuUsage, fmtNumber, fmtSeconds } from './format.js';
import type { CampaignData, ReportOptions } from './inputs.js';
import { buildGantt, idleTables } from './timeline.js';
import type { ChartMarker, ChartModel, Gantt, ReportModel, Section } from './view-model.js';

type Attempt = CampaignData['manifest']['attempts'][number];

/** Resume points (each attempt after the first) and ends that were not successes, as chart markers. */
export function attemptMarkers(
  attempts: Attempt[],
  lastStepOf: (a: Attempt) => number | undefined,
): ChartMarker[] {
  const markers: ChartMarker[] = [];
  attempts.forEach((a, i) => {
    if (i > 0)
      markers.push({
        x: a.startedFromStep,
        label: `attempt ${a.attempt} resumed from step ${a.startedFromStep}`,
        kind: 'resume',
      });
    if (a.outcome === 'failed' || a.outcome === 'paused' || a.outcome === 'cancelled') {
      const x = a.finalStep ?? lastStepOf(a) ?? a.checkpointStepAfter;
      markers.push({
        x,
        label: `attempt ${a.attempt} ${a.outcome === 'failed' ? `failed: ${a.ended.type}` : a.outcome}`,
        kind: a.outcome === 'failed' ? 'failure' : 'pause',
      });
    }
  });
  return markers.sort((a, b) => a.x - b.x);
}

/**
 * One continuous curve of a key across attempts: each attempt contributes its steps up to where the
 * next one resumed; the steps it trained past that point (redone after the resume) are a faint second curve.
 */
export function stitchedCurves(
  attempts: { record: AttemptRecord; points: [number, number][] }[],
  key: string,
): Curve[] {
  const kept: [number, number][] = [];
  const keptGaps: [number, number][] = [];
  const redoneSegments: [number, number][][] = [];
  attempts.forEach(({ record, points }, i) => {
    const from = record.startedFromStep;
    const until = attempts[i + 1]?.record.startedFromStep ?? Infinity;
    // An attempt without data leaves a hole: the line breaks rather than bridging it.
    if (points.length === 0 && Number.isFinite(until)) keptGaps.push([from, until + 1]);
    const redone: [number, number][] = [];
    for (const p of points) {
      if (p[0] < from || (i > 0 && p[0] === from)) continue;
      (p[0] <= until ? kept : redone).push(p);
    }
    if (redone.length) redoneSegments.push(redone);
  });
  const curves: Curve[] = [{ label: key, points: kept, gaps: keptGaps }];
  if (redoneSegments.length) {
    const gaps = redoneSegments
      .slice(1)
      .map((seg, i): [number, number] => [redoneSegments[i]![redoneSegments[i]!.length - 1]![0], seg[0]![0]]);
    curves.push({
      label: `${key} (steps redone after a resume)`,
      points: redoneSegments.flat(),
      faint: true,
      gaps,
    });
  }
  return curves;
}

/**
 * Every attempt's stages on one Gantt chart (the attempt records carry them through teardown), with
 * each attempt's idle GPU spans, measured as for an experiment from its own manifest's checkpoints.
 */
export function campaignGantt(data: CampaignData): Gantt | undefined {
  const parts = data.manifest.attempts.flatMap((a) => {
    if (!a.stages?.length) return [];
    const m = data.attempts.find((d) => d.workflowId === a.workflowId)?.manifest;
    const gpus = m ? m.cluster.shape.workerGroups.reduce((n, g) => n + g.replicas * g.gpusPerWorker, 0) : 0;
    const g = buildGantt({
      stages: a.stages,
      checkpoints: m?.checkpoints ?? [],
      gpus,
      complete: true,
      backend: m?.cluster.backend ?? 'local',
    });
    return g ? [{ attempt: a.attempt, g, hasManifest: m !== undefined }] : [];
  });
  if (parts.length === 0) return undefined;
  const origin = Math.min(...parts.map((p) => Date.parse(p.g.origin)));
  const bars: Gantt['bars'] = [];
  const idle: Gantt['idle'] = [];
  const unknown = new Set<string>();
  for (const { attempt, g, hasManifest } of parts) {
    const shift = (Date.parse(g.origin) - origin) / 1000;
    bars.push(
      ...g.bars.map((b) => ({
        ...b,
        label: `a${attempt} ${b.label}`,
        start: b.start + shift,
        end: b.end + shift,
      })),
    );
    if (!hasManifest)
      unknown.add(
        `attempt ${attempt}: its manifest could not be read, so its GPUs and checkpoints are unknown`,
      );
    idle.push(
      ...g.idle.map((s) => ({
        ...s,
        label: `a${attempt}: ${s.label}`,
        start: s.start + shift,
        end: s.end + shift,
      })),
    );
    for (const u of g.unknown)
      unknown.add(u.startsWith('the newest checkpoint') ? `attempt ${attempt}: ${u}` : u);
  }
  const gpus = Math.max(...parts.map((p) => p.g.gpus));
  const total = Math.max(...bars.map((b) => b.end));
  return { origin: new Date(origin).toISOString(), total, bars, idle, gpus, unknown: [...unknown] };
}

function timelineSection(data: CampaignData): Section {
  const gantt = campaignGantt(data);
  const section: Section = { title: 'Stage timeline across attempts', notes: [], charts: [], tables: [] };
  if (!gantt) {
    section.notes.push('The attempt records carry no stages (campaigns recorded before they did).');
    return section;
  }
  section.gantt = gantt;
  section.tables.push(...idleTables(gantt, 'GPU time left idle by orchestration'));
  return section;
}

/** The campaign report: continuous curves across attempts with resume points and failures, and the attempts. */
export function campaignReport(data: CampaignData, options: ReportOptions): ReportModel {
  const m = data.manifest;
  const byId = new Map(data.attempts.map((a) => [a.workflowId, a]));
  const withSeries = m.attempts.map((record) => {
    const d = byId.get(record.workflowId);
    return { record, series: d && 'series' in d.series ? d.series.series : undefined, data: d };
  });
  const section: Section = { title: 'Training across attempts', notes: [], charts: [], tables: [] };
  for (const w of withSeries) {
    if (!w.series) {
      const why = w.data && 'missing' in w.data.series ? w.data.series.missing : 'not read';
      section.notes.push(`Attempt ${w.record.attempt} (${w.record.workflowId}): ${why}`);
    }
  }
  const present = [...new Set(withSeries.flatMap((w) => (w.series ? seriesKeys(w.series) : [])))].sort();
  const keys = [
    ...CURVE_GROUPS.flatMap((g) => present.filter((k) => g.match(k)).slice(0, 2)),
    ...options.keys,
  ].filter((k, i, all) => all.indexOf(k) === i);
  const markers = attemptMarkers(m.attempts, (a) => {
    const s = withSeries.find((w) => w.record.workflowId === a.workflowId)?.series;
    const last = s?.points[s.points.length - 1];
    return last?.step;
  });
  for (const key of keys) {
    if (!present.includes(key)) {
      section.notes.push(`Key '${key}' is in no attempt's series.`);
      continue;
    }
    const curves = stitchedCurves(
      withSeries.map((w) => ({ record: w.record, points: w.series ? curveOf(w.series, key) : [] })),
      key,
    );
    const chart: ChartModel = alignCurves(
      { id: chartId('campaign', key), title: key, xLabel: 'step', yLabel: key, markers },
      curves,
    );
    section.charts.push(chart);
  }
  if (present.length === 0) section.notes.push('No attempt has a metrics series: no curve to draw.');
  section.tables.push({
    title: 'Resume points and failures',
    header: ['step', 'what'],
    rows: markers.map((mk) => [String(mk.x), mk.label]),
  });
  const attempts: Section = {
    title: 'Attempts',
    notes: [],
    charts: [],
    tables: [
      {
        title: `${m.attempts.length} attempts`,
        header: [
          'attempt',
          'workflow id',
          'started from step',
          'outcome',
          'ended',
          'final step',
          'checkpoint after',
          'GPU time',
          'manifest',
        ],
        rows: m.attempts.map((a) => [
          String(a.attempt),
          a.workflowId,
          String(a.startedFromStep),
          a.outcome,
          `${a.ended.type}: ${a.ended.message}`,
          fmtNumber(a.finalStep),
          String(a.checkpointStepAfter),
          `${fmtSeconds(a.gpuSeconds)} (GPU-s ${fmtNumber(a.gpuSeconds, 6)})`,
          a.manifestPath,
        ]),
      },
    ],
  };
  return {
    kind: 'campaign',
    title: `Campaign ${m.experiment}`,
    subtitle: m.campaign,
    facts: [
      ['outcome', `${m.outcome}${m.reason ? `: ${m.reason}` : ''}`],
      ['steps', `${m.totalTrainingSteps} planned`],
      ['attempts', String(m.attempts.length)],
      ['GPU-seconds', fmtNumber(m.gpuSeconds, 6)],
      ['GPU-hours', fmtGpuUsage(m.gpuUsage)],
      ['archive folder', data.dir],
      ['written', m.writtenAt],
    ],
    sections: [section, timelineSection(data), attempts],
  };
}
