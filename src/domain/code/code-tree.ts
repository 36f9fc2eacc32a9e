/**
 * Which files of a shipped tree travel, and whether they fit: pure rules, table-tested. The I/O
 * (listing the tree with git, reading it) is src/provenance/code-tree.ts.
 */

/** One file of the tree: its path relative to the tree's top (`/`-separated) and size in bytes. */
export interface TreeFile {
  path: string;
  size: number;
}

const escapeRegex = (s: string) => s.replace(/[.+^${}()|[\]\\]/g, '\\$&');

/** A .gitignore-style pattern as a regex over a `/`-separated path (see CodeSchema.exclude). */
function patternRegex(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += escapeRegex(c);
  }
  return new RegExp(`^${out}$`);
}

interface Rule {
  regex: RegExp;
  /** Matched against the path from the top (a `/` in the pattern) or against each name. */
  anchored: boolean;
  /** A trailing `/`: matches folders only. */
  dirOnly: boolean;
}

function ruleOf(pattern: string): Rule {
  const dirOnly = pattern.endsWith('/');
  const body = dirOnly ? pattern.slice(0, -1) : pattern;
  const anchored = body.includes('/');
  return { regex: patternRegex(body.replace(/^\//, '')), anchored, dirOnly };
}

/**
 * `exclude` as a predicate on a file's path: a file is left out when a pattern matches it or any
 * folder above it (leaving out a folder leaves out what is in it), as git reads .gitignore.
 */
export function excludeMatcher(patterns: readonly string[]): (path: string) => boolean {
  const rules = patterns.map(ruleOf);
  return (path) => {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const isDir = i < parts.length;
      const prefix = parts.slice(0, i).join('/');
      const name = parts[i - 1] ?? '';
      for (const r of rules) {
        if (r.dirOnly && !isDir) continue;
        if (r.regex.test(r.anchored ? prefix : name)) return true;
      }
    }
    return false;
  };
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
