import { alignedTable } from './text-table.js';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';
import { SearchAttributes as K } from '../workflows/search-attributes.js';
import { withClient } from './client.js';
import { type ListFilters, listQuery } from './list-query.js';

/** One row of `list`, read from the visibility record only (search attributes and status). */
export interface ListRow {
  workflowId: string;
  kind: string;
  name: string;
  status: string;
  stage: string;
  outcome: string;
  validationSuccess: string;
  checkpointStep: string;
  /** Allocated GPU-hours, set when the run ends ('-' while it runs and for runs from before). */
  gpuHours: string;
  parent: string;
  started: string;
}

export function listRow(w: WorkflowExecutionInfo): ListRow {
  const sa = w.typedSearchAttributes;
  const success = sa.get(K.validationSuccess);
  const step = sa.get(K.checkpointStep);
  const gpuSeconds = sa.get(K.gpuSeconds);
  const kind = sa.get(K.kind) ?? '-';
  const sweepId = sa.get(K.sweepId);
  const campaignId = sa.get(K.campaignId);
  // A child names the sweep or campaign it belongs to; a sweep or campaign's own id is not a parent.
  const parent = kind === 'experiment' ? (sweepId ?? campaignId ?? '-') : '-';
  return {
    workflowId: w.workflowId,
    kind,
    name: sa.get(K.name) ?? '-',
    status: w.status.name.toLowerCase(),
    stage: sa.get(K.stage) ?? '-',
    outcome: sa.get(K.outcome) ?? '-',
    validationSuccess: success === undefined ? '-' : String(Math.round(success * 1000) / 1000),
    checkpointStep: step === undefined ? '-' : String(step),
    gpuHours: gpuSeconds === undefined ? '-' : fmtGpuHours(gpuSeconds),
    parent,
    started: w.startTime.toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/** GPU-hours to 3 significant digits (0.00417, 1.25, 312). */
export function fmtGpuHours(seconds: number): string {
  const hours = seconds / 3600;
  return hours === 0 ? '0' : String(Number(hours.toPrecision(3)));
}

const COLUMNS: [keyof ListRow, string][] = [
  ['workflowId', 'WORKFLOW ID'],
  ['kind', 'KIND'],
  ['name', 'NAME'],
  ['status', 'STATUS'],
  ['stage', 'STAGE'],
  ['outcome', 'OUTCOME'],
  ['validationSuccess', 'VAL SUCCESS'],
  ['checkpointStep', 'CHECKPOINT'],
  ['gpuHours', 'GPU-HOURS'],
  ['parent', 'SWEEP/CAMPAIGN'],
  ['started', 'STARTED'],
];

/** The rows as an aligned text table, a header first. */
export function listTable(rows: ListRow[]): string {
  return alignedTable(
    COLUMNS.map(([, title]) => title),
    rows.map((r) => COLUMNS.map(([key]) => r[key])),
  );
}

/** The newest `limit` matches of the query (the server returns newest first). */
export async function listWorkflows(client: Client, query: string, limit: number): Promise<ListRow[]> {
  const rows: ListRow[] = [];
  for await (const w of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    rows.push(listRow(w));
    if (rows.length >= limit) break;
  }
  return rows;
}

/** `list`: experiments, campaigns and sweeps from Temporal's visibility store, filtered. */
export async function listCommand(
  config: OrchestratorConfig,
  filters: ListFilters,
  limit: number,
): Promise<number> {
  return withClient(config, async (client) => {
    const query = listQuery(filters);
    const rows = await listWorkflows(client, query, limit);
    if (rows.length === 0) console.log(`nothing matches (${query})`);
    else console.log(listTable(rows));
    if (rows.length === limit) console.log(`(the newest ${limit}; --limit shows more)`);
    return 0;
  });
}
