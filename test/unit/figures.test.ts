/**
 * Figures are data: every measured figure that README.md and docs/*.md quote is listed in
 * docs/figures.yaml with its results file (bench/results/). For each quote this renders the
 * placeholders from the file (test/helpers/figures.ts) and requires the doc to contain the text,
 * in a paragraph or table row that names the results file or after one of its section that does.
 * For each results file quoted, the code it measured (its `measured` paths) must not have changed
 * since its commit, or since a later commit at which someone read the change and wrote down why
 * the figures still hold (`reviewed`). Else: re-run the bench, or take its figures out.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { FigureError, render, squash } from '../helpers/figures.js';
import { changedSince, historyProblem, isAncestor } from '../helpers/measured-code.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tablePath = 'docs/figures.yaml';

interface Citation {
  results: string;
  doc: string;
  quotes: string[];
}
interface Review {
  at: string;
  because: string;
}
const table = parse(readFileSync(join(root, tablePath), 'utf8')) as {
  reviewed?: Record<string, Review>;
  figures: Citation[];
};

interface ResultsFile {
  commit: string;
  measured?: string[];
}
const readResults = (name: string) =>
  JSON.parse(readFileSync(join(root, 'bench', 'results', name), 'utf8')) as ResultsFile;

/** A doc's blocks (paragraphs, and each table row apart), each with the heading it sits under. */
function blocksOf(doc: string): { section: number; text: string }[] {
  const blocks: { section: number; text: string }[] = [];
  let section = 0;
  let lines: string[] = [];
  const close = () => {
    if (lines.length > 0) blocks.push({ section, text: squash(lines.join('\n')) });
    lines = [];
  };
  for (const line of doc.split('\n')) {
    if (/^#/.test(line)) {
      close();
      section++;
      blocks.push({ section, text: squash(line) });
    } else if (line.trim() === '') close();
    else if (/^\s*\|/.test(line)) {
      close();
      blocks.push({ section, text: squash(line) });
    } else lines.push(line);
  }
  close();
  return blocks;
}

const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe(`figures (${tablePath}) against their results files`, () => {
  const quoted = new Set(table.figures.map((c) => c.results));

  it('cites only docs and results files that exist, each results file with its measured paths', () => {
    for (const c of table.figures) {
      assert.ok(docs.includes(c.doc), `${c.doc}: not README.md or a page of docs/`);
      assert.ok(
        existsSync(join(root, 'bench', 'results', c.results)),
        `bench/results/${c.results} does not exist`,
      );
      assert.ok(c.quotes.length > 0, `${c.doc} / ${c.results}: no quotes`);
    }
    for (const name of quoted) {
      const measured = readResults(name).measured;
      assert.ok(
        Array.isArray(measured) && measured.length > 0,
        `bench/results/${name} has no measured paths (bench/results.ts writes them)`,
      );
    }
    for (const name of Object.keys(table.reviewed ?? {}))
      assert.ok(quoted.has(name), `reviewed: ${name} is not quoted anywhere`);
  });

  for (const doc of docs) {
    const citations = table.figures.filter((c) => c.doc === doc);
    if (citations.length === 0) continue;
    it(`${doc}: every quote is there, its numbers as its results file has them`, () => {
      const text = readFileSync(join(root, doc), 'utf8');
      const whole = squash(text);
      const blocks = blocksOf(text);
      const problems: string[] = [];
      let count = 0;
      for (const c of citations) {
        const results = readResults(c.results);
        for (const quote of c.quotes) {
          count++;
          let rendered: string;
          try {
            rendered = squash(render(quote, results));
          } catch (e) {
            if (!(e instanceof FigureError)) throw e;
            problems.push(`${c.results}: ${e.message}`);
            continue;
          }
          if (!whole.includes(rendered)) {
            problems.push(`${c.results}: the doc does not say "${rendered}"`);
            continue;
          }
          const at = blocks.findIndex((b) => b.text.includes(rendered));
          if (at < 0) {
            problems.push(`${c.results}: "${rendered}" runs over two paragraphs`);
            continue;
          }
          const named = blocks
            .slice(0, at + 1)
            .some((b) => b.section === blocks[at]!.section && b.text.includes(c.results));
          if (!named)
            problems.push(`${c.results}: "${rendered}" is not in or after a paragraph naming the file`);
        }
      }
      console.log(`${doc}: ${count} quotes checked`);
      assert.deepEqual(problems, [], problems.join('\n'));
    });
  }

  for (const name of [...quoted].sort()) {
    it(`${name}: the code it measured is unchanged since it ran (or reviewed since)`, () => {
      const { commit, measured = [] } = readResults(name);
      const review = table.reviewed?.[name];
      const since = review?.at ?? commit;
      const problem = historyProblem(root, commit) ?? (review ? historyProblem(root, review.at) : undefined);
      assert.equal(problem, undefined, `bench/results/${name}: ${problem}`);
      if (review)
        assert.ok(
          isAncestor(root, commit, review.at),
          `reviewed ${name}: ${review.at} is not after ${commit}`,
        );
      const changed = changedSince(root, since, measured);
      assert.deepEqual(
        changed,
        [],
        `bench/results/${name} measured ${measured.join(', ')} at ${since.slice(0, 7)}; since then ` +
          `these changed: ${changed.join(', ')}. Re-run its bench, or remove its figures from the docs ` +
          `and ${tablePath}, or, once you have read the change and know the figures still hold, add ` +
          `reviewed: {${name}: {at: <this commit>, because: <why>}} to ${tablePath}.`,
      );
    });
  }
});
