/**
 * What a report shows, as plain JSON: built by pure functions from parsed manifests and metrics
 * series (experiment-view.ts, sweep-view.ts, campaign-view.ts), drawn by render-html.ts.
 */

/** A vertical line on a curve: where a campaign attempt resumed, or where one failed or paused. */
export interface ChartMarker {
  x: number;
  label: string;
  kind: 'resume' | 'failure' | 'pause';
}

/** One uPlot chart: shared x values, one value array per series (null = no point there). */
export interface ChartModel {
  id: string;
  title: string;
  /** line: curves over steps; points: a scatter (x sorted); bars: one bar per x. */
  kind: 'line' | 'points' | 'bars';
  xLabel: string;
  yLabel: string;
  x: number[];
  /**
   * null = this series has no point at that x (the line passes over it); `gaps` lists open x
   * intervals where the line must break instead (a campaign attempt without data).
   */
  series: { label: string; values: (number | null)[]; faint?: boolean; gaps?: [number, number][] }[];
  markers?: ChartMarker[];
  /** For a categorical x (a string parameter): the label of x = 0, 1, 2, … */
  xCategories?: string[];
}

/** One bar of the Gantt chart: seconds from the timeline's start. */
export interface GanttBar {
  label: string;
  start: number;
  end: number;
  /** The record has no end (the manifest is written during the archive stage). */
  open: boolean;
  outcome: string;
  error?: string;
}

/** A span of the cluster's GPUs left idle by orchestration, drawn over the Gantt chart. */
export interface IdleSpan {
  label: string;
  start: number;
  end: number;
  seconds: number;
  gpuSeconds: number;
  /** How it was measured and what it leaves out. */
  note: string;
}

export interface Gantt {
  /** ISO time of second 0. */
  origin: string;
  total: number;
  bars: GanttBar[];
  idle: IdleSpan[];
  gpus: number;
  /** What the records cannot say about idle GPU time. */
  unknown: string[];
}

/** A table: header and rows of plain strings (escaped when drawn). */
export interface TableModel {
  title: string;
  header: string[];
  rows: string[][];
}

export interface Section {
  title: string;
  notes: string[];
  charts: ChartModel[];
  gantt?: Gantt;
  tables: TableModel[];
}

export interface ReportModel {
  kind: 'experiment' | 'sweep' | 'campaign' | 'usage';
  title: string;
  subtitle: string;
  /** Facts shown at the top: [label, value]. */
  facts: [string, string][];
  sections: Section[];
}
