/**
 * The results file of a bench: bench/results/<name>.json with the commit, the date, the machine,
 * its load and the numbers the bench printed. The docs quote these files; a figure without one is
 * not quoted (docs/benchmarks.md). A run overwrites the previous file of the same name: commit it
 * to publish the numbers. `measured` names the code the numbers depend on (the bench itself, the
 * files or folders it exercises): test/unit/figures.test.ts flags the file once that code changes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
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

/**
 * Writes bench/results/<name>.json and prints its path; returns the path. `measured`: repository
 * paths (files or folders) whose change makes the numbers stale.
 */
export function writeResults(name: string, measured: readonly string[], numbers: unknown): string {
  const missing = measured.filter((p) => !existsSync(join(repoRoot, p)));
  // Checked before the numbers are written: a moved file must not leave a results file measuring nothing.
  if (measured.length === 0 || missing.length > 0) {
    throw new Error(`writeResults(${name}): measured paths missing: ${missing.join(', ') || '(none given)'}`);
  }
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
    measured,
    numbers,
  };
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`results: ${path}`);
  return path;
}
