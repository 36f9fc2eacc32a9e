import type { StageRecord } from '../domain/run/results.js';
import { campaignReport } from './campaign-view.js';
import { experimentReport } from './experiment-view.js';
import type { ReportOptions } from './inputs.js';
import { type ReportKind, kindOfFolder, loadCampaign, loadExperiment, loadSweep } from './load-run.js';
import { loadReportAssets } from './report-assets.js';
import { renderReportHtml } from './render-html.js';
import { sweepReport } from './sweep-view.js';
import type { ReportModel } from './view-model.js';

/** What the report is made from: an archive folder, its kind (else found from its files), and complete stage records if known. */
export interface ReportSource {
  dir: string;
  kind?: ReportKind;
  completeStages?: StageRecord[];
}

/** Chart ids become element ids: keys that differ only in punctuation (`a.b`, `a_b`) must not share one. */
export function withUniqueChartIds(model: ReportModel): ReportModel {
  const seen = new Map<string, number>();
  for (const section of model.sections) {
    for (const chart of section.charts) {
      const n = seen.get(chart.id) ?? 0;
      seen.set(chart.id, n + 1);
      if (n > 0) chart.id = `${chart.id}-${n + 1}`;
    }
  }
  return model;
}

/** Read the folder's files and build the view model. */
export async function buildReportModel(source: ReportSource, options: ReportOptions): Promise<ReportModel> {
  const kind = source.kind ?? (await kindOfFolder(source.dir));
  switch (kind) {
    case 'experiment':
      return withUniqueChartIds(
        experimentReport(await loadExperiment(source.dir, source.completeStages), options),
      );
    case 'sweep':
      return withUniqueChartIds(sweepReport(await loadSweep(source.dir, options.top), options));
    case 'campaign':
      return withUniqueChartIds(campaignReport(await loadCampaign(source.dir), options));
  }
}

/** The whole page for a source. */
export async function reportHtml(
  source: ReportSource,
  options: ReportOptions,
  now = new Date(),
): Promise<string> {
  const [model, assets] = await Promise.all([buildReportModel(source, options), loadReportAssets()]);
  return renderReportHtml(model, assets, now.toISOString());
}
