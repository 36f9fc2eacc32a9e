import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../../src/config/config.js';
import { importCircles, importEdges, tsFilesUnder } from '../helpers/import-graph.js';

interface LayoutRow {
  folder: string;
  purpose: string;
  /** Top folders of src/ this one may import (undefined: a sub-folder, ruled by its parent). */
  mayImport?: string[];
}

/** The code-layout table of docs/architecture.md: the one place the layout and its rules are written. */
function layoutTable(): LayoutRow[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Code layout'));
  const rows: LayoutRow[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const folder = /^`(src\/[^`]*)`$/.exec(cells[1] ?? '')?.[1];
    if (!folder) continue;
    const may = cells[3] ?? '';
    rows.push({
      folder,
      purpose: cells[2] ?? '',
      ...(may === 'as its parent'
        ? {}
        : { mayImport: may === '—' ? [] : [...may.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!) }),
    });
  }
  return rows;
}

function foldersUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(REPO_ROOT, dir))) {
    if (!statSync(join(REPO_ROOT, dir, name)).isDirectory()) continue;
    const path = `${dir}${name}/`;
    out.push(path, ...foldersUnder(path));
  }
  return out;
}

const topOf = (path: string) => path.split('/')[1]!;

describe('code layout (docs/architecture.md)', () => {
  const rows = layoutTable();

  it('lists every folder of src/, and only folders that exist', () => {
    const listed = rows.map((r) => r.folder).sort();
    assert.deepEqual(listed, foldersUnder('src/').sort());
  });

  it("opens each folder with a README.md that is the table's purpose line", () => {
    for (const { folder, purpose } of rows) {
      const readme = join(REPO_ROOT, folder, 'README.md');
      assert.ok(existsSync(readme), `${folder} has no README.md: write its one-line purpose`);
      assert.equal(readFileSync(readme, 'utf8').trim(), `${purpose}.`, `${folder}README.md`);
    }
  });

  it('gives every top folder its imports, and a sub-folder none of its own', () => {
    for (const row of rows) {
      const top = row.folder.split('/').length === 3;
      assert.equal(row.mayImport !== undefined, top, `${row.folder}: ${top ? 'name' : 'no'} may-import list`);
    }
  });

  it('has no import outside its row: nothing imports upward', () => {
    const allowed = new Map(rows.filter((r) => r.mayImport).map((r) => [topOf(r.folder), r.mayImport!]));
    const wrong = importEdges(REPO_ROOT, tsFilesUnder(REPO_ROOT, 'src'))
      .filter(({ from, to }) => to.startsWith('src/') && topOf(from) !== topOf(to))
      .filter(({ from, to }) => !(allowed.get(topOf(from)) ?? []).includes(topOf(to)))
      .map(({ from, to }) => `${from} -> ${to}`);
    assert.deepEqual(wrong, [], 'imports the architecture table does not allow');
  });

  it('has no circle of imports, type-only imports included', () => {
    const circles = importCircles(importEdges(REPO_ROOT, tsFilesUnder(REPO_ROOT, 'src')));
    assert.deepEqual(
      circles.map((c) => c.join(' <-> ')),
      [],
    );
  });

  it('finds an upward import and a circle when there is one (the checks can fail)', () => {
    const edges = [
      { from: 'src/domain/a.ts', to: 'src/domain/b.ts' },
      { from: 'src/domain/b.ts', to: 'src/domain/a.ts' },
      { from: 'src/domain/c.ts', to: 'src/domain/c.ts' },
    ];
    assert.deepEqual(importCircles(edges), [['src/domain/a.ts', 'src/domain/b.ts'], ['src/domain/c.ts']]);
    const domain = rows.find((r) => r.folder === 'src/domain/');
    assert.deepEqual(domain?.mayImport, [], 'the domain imports no other folder');
  });
});
