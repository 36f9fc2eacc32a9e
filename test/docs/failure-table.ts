/**
 * The docs' failure table, rendered from the failure catalogue (src/domain/failures/catalogue.ts)
 * into docs/reference.md between two markers. `npm run docs:failures` writes it;
 * test/unit/failure-catalogue.test.ts fails when the doc differs from what this renders.
 */
import {
  type CampaignCount,
  FAILURE_CATALOGUE,
  type FailureEntry,
  type Retry,
} from '../../src/domain/failures/catalogue.js';

export const FAILURE_TABLE_DOC = 'docs/reference.md';
export const BEGIN =
  '<!-- failure table: written by `npm run docs:failures` from src/domain/failures/catalogue.ts -->';
export const END = '<!-- end of the failure table -->';

const RETRY: Record<Retry, string> = { permanent: 'no', transient: 'yes', either: 'as the message says' };
const CAMPAIGN: Record<CampaignCount, string> = {
  attempt: 'another attempt, counted',
  fatal: 'ends the campaign',
  preempted: 'another attempt, not counted',
  none: '— (ends a campaign or sweep itself)',
};

const cell = (text: string) => text.replaceAll('|', '\\|');

function row(name: string, e: FailureEntry): string[] {
  return [`\`${name}\``, RETRY[e.retry], e.resubmit ? 'yes' : 'no', CAMPAIGN[e.campaign], e.means, e.fix].map(
    cell,
  );
}

/** The markdown table, columns padded as prettier pads them. */
export function renderFailureTable(): string {
  const head = ['type', 'retried', 'new cluster', 'in a campaign', 'what happened', 'what to do'];
  const rows = Object.entries(FAILURE_CATALOGUE).map(([name, e]) => row(name, e));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function markers(doc: string): { begin: number; end: number } {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${FAILURE_TABLE_DOC} has no failure table markers`);
  return { begin: begin + BEGIN.length, end };
}

/** The table now between the markers of `doc`. */
export function tableIn(doc: string): string {
  const { begin, end } = markers(doc);
  return doc.slice(begin, end).trim();
}

/** `doc` with `table` between the markers, a blank line either side. */
export function withTable(doc: string, table: string): string {
  const { begin, end } = markers(doc);
  return `${doc.slice(0, begin)}\n\n${table}\n\n${doc.slice(end)}`;
}
