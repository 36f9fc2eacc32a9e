import { isFailureEvidence } from '../../domain/failures/job-exit.js';
import { addPoint, emptySeries, updateSummary } from '../../domain/train/metrics-downsample.js';
import type { MetricsSeries, MetricsSummary } from '../../domain/train/metrics-series.js';

/**
 * Parse verl's console lines (contract §1.5). verl 0.6.1 prints them from `concat_dict_to_str` as a
 * whole line: `step:N` then ` - key:pformat(value)` for each numeric metric. A Ray log prefix such
 * as `(TaskRunner pid=…, ip=…)` may precede it; numpy 2 prints scalars as `np.float64(x)` or
 * `np.int64(n)`; keys may hold spaces (RAGEN's env names and tags do). A line counts only when it
 * starts with `step:N` (after the prefix) and every part after it is `key:number`: a model's sample
 * output that merely contains or ends in `step:N` is no step.
 */
const RAY_PREFIX = /^\([A-Za-z_][\w.:-]* pid=\d+[^)]*\)\s*/;
const ANSI = /\x1b\[[0-9;]*m/g;
const STEP_HEAD = /^step:(\d+)$/;
/** What pformat prints for a numbers.Number: a literal (nan, inf too), a bool, or a numpy 2 scalar. */
const VALUE =
  /^(?:np\.(?:float|int|uint|longdouble|double|single|half|intc|short|byte)\d*\((.+)\)|(-?(?:\d[\d_]*\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan)|True|False))$/i;

export interface StepMetrics {
  step: number;
  metrics: Record<string, number>;
}

export function parseStepLine(line: string): StepMetrics | undefined {
  const text = line.replace(ANSI, '').trimEnd().replace(RAY_PREFIX, '');
  const [head = '', ...parts] = text.split(' - ');
  const step = STEP_HEAD.exec(head)?.[1];
  if (step === undefined) return undefined;
  const metrics: Record<string, number> = {};
  for (const part of parts) {
    const at = part.lastIndexOf(':');
    const value = VALUE.exec(part.slice(at + 1));
    if (at <= 0 || !value) return undefined; // not verl's `key:number`: sample text, not a step line
    const raw = value[1] ?? value[2] ?? part.slice(at + 1);
    const n = raw === 'True' ? 1 : raw === 'False' ? 0 : Number(raw.replace(/_/g, ''));
    if (Number.isFinite(n)) metrics[part.slice(0, at)] = n;
  }
  return { step: Number(step), metrics };
}

export interface TrainLogSummary {
  lastStep: number;
  lastMetrics: Record<string, number>;
  earlyStopped: string[];
}

/** Lines kept for a failed job's message and classification. */
const TAIL_LINES = 60;
const EVIDENCE_LINES = 20;

/**
 * What the train activity knows from the log so far: plain JSON, so it is saved next to the log
 * copy and a retried activity continues from it instead of parsing the log again.
 */
export interface TrainLogState extends TrainLogSummary {
  /** Lines classifyJobFailure reads (disk full, config or resource errors), from anywhere in the log. */
  evidence: string[];
  /** The last lines, for a failed job's message. */
  tail: string[];
  series: MetricsSeries;
  summary: MetricsSummary;
}

export function emptyTrainLogState(maxPoints?: number): TrainLogState {
  return {
    lastStep: 0,
    lastMetrics: {},
    earlyStopped: [],
    evidence: [],
    tail: [],
    series: emptySeries(maxPoints),
    summary: {},
  };
}

/**
 * Fold whole log lines into the state (mutates it): one pass over new lines only. Returns the step
 * lines among them, parsed, for whoever else reads them (in-loop validations).
 */
export function feedTrainLog(state: TrainLogState, lines: string): StepMetrics[] {
  const list = lines.split('\n');
  if (list.at(-1) === '') list.pop();
  const steps: StepMetrics[] = [];
  for (const line of list) {
    if (state.evidence.length < EVIDENCE_LINES && isFailureEvidence(line)) state.evidence.push(line);
    const parsed = parseStepLine(line);
    if (!parsed) continue;
    steps.push(parsed);
    if (parsed.step >= state.lastStep) {
      state.lastStep = parsed.step;
      state.lastMetrics = parsed.metrics;
    }
    if (Object.keys(parsed.metrics).length > 0) {
      state.series = addPoint(state.series, { step: parsed.step, values: parsed.metrics });
      state.summary = updateSummary(state.summary, parsed.step, parsed.metrics);
    }
    // RAGEN logs the rule that fired as 1.0 (contract §1.6); a 0 would mean it did not fire.
    for (const [key, value] of Object.entries(parsed.metrics))
      if (key.startsWith('early_stopped/') && value > 0 && !state.earlyStopped.includes(key))
        state.earlyStopped.push(key);
  }
  state.tail = [...state.tail, ...list.slice(-TAIL_LINES)].slice(-TAIL_LINES);
  return steps;
}

/** What classifyJobFailure and a failure message read: the evidence lines, then the last lines. */
export function failureText(state: TrainLogState): string {
  return [...state.evidence, ...state.tail].join('\n');
}

export function summarizeTrainLog(logs: string): TrainLogSummary {
  const state = emptyTrainLogState();
  feedTrainLog(state, logs);
  return { lastStep: state.lastStep, lastMetrics: state.lastMetrics, earlyStopped: state.earlyStopped };
}
