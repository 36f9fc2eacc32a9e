/**
 * Parse verl's console lines `step:N - key:value - …` (contract §1.5): a Ray log prefix such as
 * `(TaskRunner pid=…)` may precede them, and numpy 2 prints values as `np.float64(x)`.
 */
const STEP_LINE = /(?:^|[\s)])step:(\d+)((?: - [^\s:]+:\S+)*)\s*$/;

export interface StepMetrics {
  step: number;
  metrics: Record<string, number>;
}

export function parseStepLine(line: string): StepMetrics | undefined {
  const match = STEP_LINE.exec(line.trimEnd());
  if (!match?.[1]) return undefined;
  const metrics: Record<string, number> = {};
  for (const part of (match[2] ?? '').split(' - ').slice(1)) {
    const at = part.lastIndexOf(':');
    const raw = part.slice(at + 1).replace(/^np\.float\d*\((.*)\)$/, '$1');
    const value = Number(raw);
    if (at > 0 && Number.isFinite(value)) metrics[part.slice(0, at)] = value;
  }
  return { step: Number(match[1]), metrics };
}

export interface TrainLogSummary {
  lastStep: number;
  lastMetrics: Record<string, number>;
  earlyStopped: string[];
}

export function summarizeTrainLog(logs: string): TrainLogSummary {
  let lastStep = 0;
  let lastMetrics: Record<string, number> = {};
  const earlyStopped = new Set<string>();
  for (const line of logs.split('\n')) {
    const parsed = parseStepLine(line);
    if (!parsed) continue;
    if (parsed.step >= lastStep) {
      lastStep = parsed.step;
      lastMetrics = parsed.metrics;
    }
    // RAGEN logs the rule that fired as 1.0 (contract §1.6); a 0 would mean it did not fire.
    for (const [key, value] of Object.entries(parsed.metrics))
      if (key.startsWith('early_stopped/') && value > 0) earlyStopped.add(key);
  }
  return { lastStep, lastMetrics, earlyStopped: [...earlyStopped] };
}
