/**
 * The import graph of src/, read with TypeScript's own pre-processor: every static import, export-from
 * and dynamic import of a relative path, type-only ones included (a type-only circle still couples two
 * files' changes). Used by the layout test; no module is loaded.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string;
  to: string;
}

/** Every .ts file under `dir`, as paths relative to `root`. */
export function tsFilesUnder(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

/** The relative imports of each file, resolved to repo-relative .ts paths. */
export function importEdges(root: string, files: string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const info = ts.preProcessFile(readFileSync(join(root, from), 'utf8'), true, true);
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = resolve(root, dirname(from), ref.fileName).replace(/\.js$/, '.ts');
      edges.push({ from, to: relative(root, target) });
    }
  }
  return edges;
}

/** Circles of files (strongly connected components of more than one file, or a self-import). */
export function importCircles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's algorithm, iterative enough for a few hundred files.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) circles.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!indexOf.has(v)) visit(v);
  return circles;
}
