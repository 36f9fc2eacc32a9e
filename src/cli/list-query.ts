import { SearchAttributes as K, type WorkflowKind } from '../workflows/search-attributes.js';

/** `list`'s filters, as its zod schema (options.ts) hands them over. */
export interface ListFilters {
  kind?: WorkflowKind;
  sweep?: string;
  campaign?: string;
  outcome?: string;
  /** Exact name; a trailing `*` matches names that start with the rest. */
  name?: string;
  owner?: string;
  team?: string;
  running: boolean;
}

/**
 * A string literal of the visibility query language. The schema refuses quotes and backslashes in
 * filter values, so nothing here needs escaping; this guards the invariant.
 */
function literal(value: string): string {
  if (/['"\\]/.test(value)) throw new Error(`a quote or backslash cannot be part of a list filter: ${value}`);
  return `'${value}'`;
}

/**
 * The visibility query for `list`: only this project's workflows (those with RagenKind), ANDed
 * with each filter given. The server answers from its visibility store; no history is read.
 */
export function listQuery(f: ListFilters): string {
  const terms = [f.kind ? `${K.kind.name} = ${literal(f.kind)}` : `${K.kind.name} IS NOT NULL`];
  if (f.sweep) terms.push(`${K.sweepId.name} = ${literal(f.sweep)}`);
  if (f.campaign) terms.push(`${K.campaignId.name} = ${literal(f.campaign)}`);
  if (f.outcome) terms.push(`${K.outcome.name} = ${literal(f.outcome)}`);
  if (f.name) {
    terms.push(
      f.name.endsWith('*')
        ? `${K.name.name} STARTS_WITH ${literal(f.name.slice(0, -1))}`
        : `${K.name.name} = ${literal(f.name)}`,
    );
  }
  if (f.owner) terms.push(`${K.owner.name} = ${literal(f.owner)}`);
  if (f.team) terms.push(`${K.team.name} = ${literal(f.team)}`);
  if (f.running) terms.push(`ExecutionStatus = 'Running'`);
  return terms.join(' AND ');
}
