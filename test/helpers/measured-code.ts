/**
 * Has the code a results file measured changed since its commit? The file lists the paths it
 * measured (files or folders, `measured`); git compares that commit with the working tree.
 * A file moved with nothing changed but its import lines is not a change (rename detection, and
 * lines that only import are ignored), so a re-layout of src/ does not age every figure.
 */
import { execFileSync } from 'node:child_process';

// Lines that only import, and comment lines (TypeScript and Python): a moved file's imports and the
// paths its comments name change, its code does not.
const importLine = String.raw`^\s*(import|from)\s|^\s*export\s.*\sfrom\s|^\s*\}\s*from\s|^\s*(//|/\*|\*|#)`;

function git(root: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Why the history cannot answer, or undefined when it can (a full clone that has the commit). */
export function historyProblem(root: string, commit: string): string | undefined {
  try {
    if (git(root, ['rev-parse', '--is-shallow-repository']).trim() === 'true')
      return 'this is a shallow clone: fetch the whole history (git fetch --unshallow) to check figures';
  } catch {
    return 'not a git work tree: the figures check needs the repository with its history';
  }
  try {
    git(root, ['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    return `commit ${commit} is not in this repository's history`;
  }
  return undefined;
}

/** Whether `ancestor` is `descendant` or comes before it. */
export function isAncestor(root: string, ancestor: string, descendant: string): boolean {
  try {
    git(root, ['merge-base', '--is-ancestor', ancestor, descendant]);
    return true;
  } catch {
    return false;
  }
}

/** The paths under `measured` changed between `since` and the working tree (old and new names of a move). */
export function changedSince(root: string, since: string, measured: readonly string[]): string[] {
  // -z numstat: "added\tdeleted\tpath\0", or for a move "added\tdeleted\t\0old\0new\0".
  const out = git(root, ['diff', '--numstat', '-z', '-M', `-I${importLine}`, since, '--']);
  const fields = out.split('\0');
  const changed: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(fields[i]!);
    if (!m) continue;
    const paths = m[3] === '' ? [fields[++i]!, fields[++i]!] : [m[3]!];
    if (m[1] === '0' && m[2] === '0') continue;
    // A folder's README (its purpose line) is not code it measured.
    if (paths.every((p) => p.endsWith('.md'))) continue;
    const under = (p: string) =>
      measured.some((dir) => p === dir || p.startsWith(`${dir.replace(/\/$/, '')}/`));
    if (paths.some(under)) changed.push(paths.join(' -> '));
  }
  return changed;
}
