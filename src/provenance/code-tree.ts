import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type TreeFile, excludeMatcher } from '../domain/code/code-tree.js';

const run = promisify(execFile);
const GIT_BUFFER = 512 * 1024 * 1024;

/** A file that travels: its size, and whether it is executable (the archive keeps 0755 for it). */
export interface ListedFile extends TreeFile {
  executable: boolean;
}

export interface ListedTree {
  root: string;
  files: ListedFile[];
  /** git: the work tree's own view; git-ignore-rules: git's .gitignore rules on a tree outside git; walk: no git at all. */
  listedBy: 'git' | 'git-ignore-rules' | 'walk';
  git?: { commit: string; dirty: boolean; diff: string; untracked: string[] };
}

/** The tree cannot be shipped: the message names code.path (or the setting) and the fix. */
export class CodeTreeError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'CodeTreeError';
  }
}

async function git(cwd: string, args: string[]): Promise<string> {
  return (await run('git', args, { cwd, maxBuffer: GIT_BUFFER })).stdout;
}
const gitOrUndefined = (cwd: string, args: string[]) => git(cwd, args).catch(() => undefined);

const nulList = (out: string) => out.split('\0').filter((p) => p !== '');

/** Folders a walk never ships (a tree outside git has no .gitignore to say so). */
const WALK_SKIPS = new Set(['.git', '__pycache__', '.venv', 'node_modules']);

async function walk(dir: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && !WALK_SKIPS.has(e.name))
      out.push(...(await walk(join(dir, e.name), `${prefix}${e.name}/`)));
    else if (!e.isDirectory()) out.push(`${prefix}${e.name}`);
  }
  return out;
}

/**
 * Paths git would commit from `dir`: tracked files and untracked ones .gitignore lets through
 * (`git ls-files --cached --others --exclude-standard`). A folder in the answer is a submodule or
 * a nested repository: its own files are listed the same way. `gitDir` lists a tree outside git
 * with an empty repository's index, so only the tree's .gitignore files decide.
 */
async function gitPaths(dir: string, prefix: string, gitDir?: string): Promise<string[]> {
  const args = gitDir ? [`--git-dir=${gitDir}`, `--work-tree=${dir}`] : [];
  const listed = nulList(
    await git(dir, [...args, 'ls-files', '-z', '--cached', '--others', '--exclude-standard']),
  );
  const out: string[] = [];
  for (const raw of listed) {
    const path = raw.replace(/\/$/, '');
    const info = await stat(join(dir, path)).catch(() => undefined);
    if (info?.isDirectory()) out.push(...(await gitPaths(join(dir, path), `${prefix}${path}/`)));
    else out.push(`${prefix}${path}`);
  }
  return out;
}

async function isGitWorkTree(dir: string): Promise<boolean> {
  return (await gitOrUndefined(dir, ['rev-parse', '--is-inside-work-tree']))?.trim() === 'true';
}

async function gitAvailable(): Promise<boolean> {
  return (await gitOrUndefined(tmpdir(), ['--version'])) !== undefined;
}

/** A tree outside git: listed through an empty scratch repository, so its .gitignore files still apply. */
async function pathsOutsideGit(root: string): Promise<string[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'ragen-code-list-'));
  try {
    await git(scratch, ['init', '-q']);
    return await gitPaths(root, '', join(scratch, '.git'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The work tree's commit, whether the shipped part differs from it, the diff, and untracked shipped files. */
async function gitState(root: string, shipped: Set<string>): Promise<ListedTree['git']> {
  const commit = (await gitOrUndefined(root, ['rev-parse', 'HEAD']))?.trim();
  if (!commit) return undefined;
  const diff = await git(root, ['diff', 'HEAD', '--binary', '--submodule=diff', '--', '.']);
  const untracked = nulList(await git(root, ['ls-files', '-z', '--others', '--exclude-standard'])).filter(
    (p) => shipped.has(p),
  );
  return { commit, dirty: diff !== '' || untracked.length > 0, diff, untracked };
}

/**
 * List the files of `root` that travel, with sizes: git's view where `root` is in a git work tree
 * (a subfolder of one works too), .gitignore rules through git otherwise, a plain walk without git;
 * then `exclude` on top. Symbolic links travel as the file they point to; links to folders do not.
 */
export async function listCodeTree(root: string, exclude: readonly string[]): Promise<ListedTree> {
  const info = await stat(root).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error)
    throw new CodeTreeError(
      'code.path',
      info.code === 'ENOENT'
        ? `${root} does not exist on the worker's machine; point code.path at a checkout (a RAGEN working copy) the worker can read`
        : `${root} cannot be read (${info.code ?? info.message}); make it readable by the worker`,
    );
  if (!info.isDirectory())
    throw new CodeTreeError(
      'code.path',
      `${root} is not a directory; point code.path at the top folder of the checkout to ship`,
    );
  const inGit = await isGitWorkTree(root);
  const listedBy = inGit ? 'git' : (await gitAvailable()) ? 'git-ignore-rules' : 'walk';
  const paths =
    listedBy === 'git'
      ? await gitPaths(root, '')
      : listedBy === 'git-ignore-rules'
        ? await pathsOutsideGit(root)
        : await walk(root, '');
  const excluded = excludeMatcher(exclude);
  const files: ListedFile[] = [];
  for (const path of [...new Set(paths)].sort()) {
    if (excluded(path)) continue;
    // A tracked file deleted in the work tree is not shipped (the diff records the deletion).
    const s = await stat(join(root, path)).catch(() => undefined);
    if (s?.isFile()) files.push({ path, size: s.size, executable: (s.mode & 0o111) !== 0 });
  }
  const tree: ListedTree = { root, files, listedBy };
  if (inGit) {
    const state = await gitState(root, new Set(files.map((f) => f.path)));
    if (state) tree.git = state;
  }
  return tree;
}

/** The listed files' bytes, in the listing's (sorted) order. */
export async function readCodeTree(
  tree: ListedTree,
): Promise<{ name: string; data: Buffer; executable: boolean }[]> {
  return Promise.all(
    tree.files.map(async (f) => ({
      name: f.path,
      data: await readFile(join(tree.root, f.path)),
      executable: f.executable,
    })),
  );
}
