/** Pure ranking and tabulation of a sweep's children (workflow, activity and CLI share them). */
import { type Cost, type GpuUsage, sumGpuUsage } from '../usage/gpu-usage.js';
import type { ChildOutcome, ParamSet, SweepRow, SweepSpec } from './sweep.js';

/** The objective's value for one child; undefined when the child produced none. */
export function objectiveValue(child: ChildOutcome, _objective: SweepSpec['objective']): number | undefined {
  // One metric today (validation.successRate); the switch point for more lives here.
  return child.successRate;
}

/**
 * Children with a value first, best first (direction max or min; ties by index), then those
 * without one by index. Ranks are 1-based and only given to children with a value.
 */
export function rankChildren(
  children: ChildOutcome[],
  paramsOf: (index: number) => ParamSet,
  objective: SweepSpec['objective'],
): SweepRow[] {
  const sign = objective.direction === 'max' ? -1 : 1;
  const valued = children.filter((c) => objectiveValue(c, objective) !== undefined);
  const rest = children
    .filter((c) => objectiveValue(c, objective) === undefined)
    .sort((a, b) => a.index - b.index);
  valued.sort(
    (a, b) =>
      sign * ((objectiveValue(a, objective) as number) - (objectiveValue(b, objective) as number)) ||
      a.index - b.index,
  );
  return [
    ...valued.map((c, i) => ({ ...c, params: paramsOf(c.index), rank: i + 1 })),
    ...rest.map((c) => ({ ...c, params: paramsOf(c.index) })),
  ];
}

/** The best child so far, for progress lines. */
export function bestChild(
  children: ChildOutcome[],
  objective: SweepSpec['objective'],
): { index: number; workflowId: string; value: number } | undefined {
  let best: { index: number; workflowId: string; value: number } | undefined;
  for (const c of children) {
    const value = objectiveValue(c, objective);
    if (value === undefined) continue;
    const better =
      !best ||
      (objective.direction === 'max' ? value > best.value : value < best.value) ||
      (value === best.value && c.index < best.index);
    if (better) best = { index: c.index, workflowId: c.workflowId, value };
  }
  return best;
}

export function countOutcomes(children: ChildOutcome[]): {
  succeeded: number;
  failed: number;
  cancelled: number;
  pruned?: number;
} {
  const n = (o: ChildOutcome['outcome']) => children.filter((c) => c.outcome === o).length;
  const pruned = n('pruned');
  return {
    succeeded: n('succeeded'),
    failed: n('failed'),
    cancelled: n('cancelled'),
    // Only sweeps with a scheduler stop children; older answers keep their shape.
    ...(pruned > 0 ? { pruned } : {}),
  };
}

/** Every child's GPU time summed; `gpus` is the base spec's cluster GPUs (the rows keep only seconds). */
export function sweepGpuUsage(children: readonly ChildOutcome[], gpus: number, cost?: Cost): GpuUsage {
  return sumGpuUsage(
    children.map((c) =>
      c.gpuSeconds === undefined
        ? undefined
        : { gpus, allocatedSeconds: c.gpuSeconds, busySeconds: c.busyGpuSeconds ?? 0, allocatedGpuHours: 0 },
    ),
    cost,
  );
}

function csvCell(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** CSV of the ranked table: rank, index, outcome, objective, one column per parameter, ids and paths. */
export function sweepCsv(rows: SweepRow[]): string {
  const paramKeys = [...new Set(rows.flatMap((r) => Object.keys(r.params)))];
  const header = [
    'rank',
    'index',
    'outcome',
    'validation_success_rate',
    ...paramKeys,
    'workflow_id',
    'manifest_path',
    'error',
  ];
  const lines = rows.map((r) =>
    [
      r.rank,
      r.index,
      r.outcome,
      r.successRate,
      ...paramKeys.map((k) => r.params[k]),
      r.workflowId,
      r.manifestPath,
      r.error,
    ]
      .map(csvCell)
      .join(','),
  );
  return `${[header.map(csvCell).join(','), ...lines].join('\n')}\n`;
}
