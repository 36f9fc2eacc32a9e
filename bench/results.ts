/**
 * The results file of a bench: bench/results/<name>.json with the commit, the date, the machine,
 * its load and the numbers the bench printed. The docs quote these files; a figure without one is
 * not quoted (docs/benchmarks.md). A run overwrites the previous file of the same name: commit it
 * to publish the numbers.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
// Taken when a bench imports this module, i.e. as it starts: the load it started under.
const loadAtStart = loadavg();
const startedAt = new Date().toISOString();

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Writes bench/results/<name>.json and prints its path; returns the path. */
export function writeResults(name: string, numbers: unknown): string {
  const dir = join(repoRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  const status = git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results']);
  const record = {
    bench: name,
    command: ['npx', 'tsx', ...process.argv.slice(1).map((a) => a.replace(`${repoRoot}/`, ''))],
    commit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    // Uncommitted changes to tracked files (results files aside): numbers of code no commit holds.
    dirty: status === undefined ? 'unknown' : status !== '',
    startedAt,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem() },
    loadavg: { atStart: loadAtStart, atEnd: loadavg() },
    numbers,
  };
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`results: ${path}`);
  return path;
}
