/**
 * Which files of a shipped tree travel, and whether they fit: pure rules, table-tested. The I/O
 * (listing the tree with git, reading it) is src/provenance/code-tree.ts.
 */
import ignore from 'ignore';

/** One file of the tree: its path relative to the tree's top (`/`-separated) and size in bytes. */
export interface TreeFile {
  path: string;
  size: number;
}

/**
 * `exclude` as a predicate on a file's path (relative, `/`-separated), with .gitignore's semantics
 * as the `ignore` package implements them (its tests run against git's own): `!` re-includes,
 * except under a left-out folder; a trailing `/` matches folders only; a leading or inner `/`
 * anchors at the top; `**` spans folders. Later patterns win over earlier ones, as in a .gitignore.
 */
export function excludeMatcher(patterns: readonly string[]): (path: string) => boolean {
  const rules = ignore().add([...patterns]);
  return (path) => rules.ignores(path);
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** The n largest of `sizes`, largest first (ties by name, so the message is the same every time). */
function largest(sizes: Map<string, number>, n: number): [string, number][] {
  return [...sizes].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n);
}

/**
 * Why the tree cannot travel, or undefined: over `code.maxSizeMb` (naming the largest files and
 * top-level folders, so the user knows what to leave out), over the ZIP entry limit, or empty.
 */
export function treeSizeIssue(
  root: string,
  files: readonly TreeFile[],
  limits: { maxSizeMb: number; maxEntries: number },
): string | undefined {
  if (files.length === 0)
    return `${root} has no file to ship (all ignored by .gitignore or code.exclude?); point code.path at the checkout to run`;
  if (files.length > limits.maxEntries)
    return `${root} has ${files.length} files to ship, over the archive's limit of ${limits.maxEntries}; leave folders out with code.exclude or .gitignore`;
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total <= limits.maxSizeMb * 1e6) return undefined;
  const byFile = new Map(files.map((f) => [f.path, f.size]));
  const byTop = new Map<string, number>();
  for (const f of files) {
    const top = f.path.includes('/') ? `${f.path.split('/')[0]}/` : f.path;
    byTop.set(top, (byTop.get(top) ?? 0) + f.size);
  }
  const list = (entries: [string, number][]) => entries.map(([p, s]) => `${p} (${mb(s)})`).join(', ');
  return (
    `the files to ship from ${root} add up to ${mb(total)} in ${files.length} files, over code.maxSizeMb=${limits.maxSizeMb}. ` +
    `Largest files: ${list(largest(byFile, 5))}; largest top-level entries: ${list(largest(byTop, 3))}. ` +
    `Leave data and build outputs out with code.exclude (or .gitignore), or raise code.maxSizeMb`
  );
}
