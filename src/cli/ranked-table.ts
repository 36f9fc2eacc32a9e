import { alignedTable } from './text-table.js';
import type { SweepRow } from '../domain/sweep/sweep.js';

/** The ranked table for a terminal: rank, success, outcome, parameters. */
export function rankedTable(rows: SweepRow[]): string {
  const paramKeys = [...new Set(rows.flatMap((r) => Object.keys(r.params)))];
  const header = ['rank', 'success', 'outcome', ...paramKeys, 'workflow id'];
  const body = rows.map((r) =>
    [
      r.rank ?? '-',
      r.successRate ?? '-',
      r.outcome,
      ...paramKeys.map((k) => r.params[k] ?? ''),
      r.workflowId,
    ].map(String),
  );
  return alignedTable(header, body);
}
