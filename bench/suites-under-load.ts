/**
 * The node suites under load: runs the unit, workflow and activity suites (or the suites and files
 * named) N times in a row, as scripts/test.sh runs them (the same files at once, the same
 * per-suite --test-timeout, read from scripts/test.sh), while `load` busy-loop processes keep every
 * core busy; writes bench/results/suites-under-load.json (each run's pass/fail counts, duration and
 * failed tests). A suite that passes here does not hang on the wall clock of a busy machine.
 *   npx tsx bench/suites-under-load.ts [--runs 3] [--load 4] [unit|workflows|activities|<file>...]
 * Some activity tests start Ray: on a shared machine, run those under the machine's Ray lock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): the suites, their helpers and timeouts. */
const measuredCode = [
  'bench/suites-under-load.ts',
  'scripts/test.sh',
  'test/unit',
  'test/workflows',
  'test/activities',
  'test/helpers',
];

const SUITES = {
  unit: { dir: 'test/unit', concurrency: 2 },
  workflows: { dir: 'test/workflows', concurrency: 2 },
  activities: { dir: 'test/activities', concurrency: 1 },
} as const;
type Suite = keyof typeof SUITES;

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const [, value] = args.splice(i, 2);
  return Number(value);
};
const runs = option('--runs', 3);
const load = option('--load', 4);
const asked = args.length > 0 ? args : Object.keys(SUITES);

/** The per-suite timeouts scripts/test.sh passes (`<suite>_timeout_ms=N`). */
function timeoutOf(suite: Suite): number {
  const match = new RegExp(`^${suite}_timeout_ms=(\\d+)`, 'm').exec(readFileSync('scripts/test.sh', 'utf8'));
  if (!match) throw new Error(`scripts/test.sh sets no ${suite}_timeout_ms`);
  return Number(match[1]);
}

/** Each suite asked, with its files: a suite's name means all its files, a file path its own suite. */
function plan(): { suite: Suite; files: string[] }[] {
  const bySuite = new Map<Suite, string[]>();
  for (const a of asked) {
    const suite = (
      a in SUITES ? a : Object.keys(SUITES).find((s) => a.startsWith(`${SUITES[s as Suite].dir}/`))
    ) as Suite | undefined;
    if (!suite) throw new Error(`${a}: not a suite (${Object.keys(SUITES).join(', ')}) nor a file of one`);
    const files =
      a === suite
        ? readdirSync(SUITES[suite].dir)
            .filter((f) => f.endsWith('.test.ts'))
            .map((f) => join(SUITES[suite].dir, f))
        : [a];
    bySuite.set(suite, [...(bySuite.get(suite) ?? []), ...files]);
  }
  return [...bySuite].map(([suite, files]) => ({ suite, files: files.sort() }));
}

interface RunResult {
  suite: Suite;
  run: number;
  timeoutMs: number;
  files: number;
  tests: number;
  pass: number;
  fail: number;
  cancelled: number;
  exitCode: number | null;
  seconds: number;
  failed: string[];
}

let running: ChildProcess | undefined;
/** One run of a suite; its whole output is kept in a file of the temp folder (named when it fails). */
function runSuite(suite: Suite, files: string[], run: number): Promise<RunResult> {
  const { concurrency } = SUITES[suite];
  const argv = ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`];
  const timeoutMs = timeoutOf(suite);
  argv.push(`--test-timeout=${timeoutMs}`, ...files);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    running = child;
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const count = (what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1] ?? NaN);
      const failed = [...out.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1] ?? '');
      if (failed.length > 0 || exitCode !== 0) {
        const log = join(mkdtempSync(join(tmpdir(), 'suites-under-load-')), `${suite}-${run}.tap`);
        writeFileSync(log, out);
        console.log(`the output of run ${run} of ${suite}: ${log}`);
      }
      resolve({
        suite,
        run,
        timeoutMs,
        files: files.length,
        tests: count('tests'),
        pass: count('pass'),
        fail: count('fail'),
        cancelled: count('cancelled'),
        exitCode,
        seconds: Math.round((Date.now() - started) / 100) / 10,
        failed,
      });
    });
  });
}

/** `n` processes that spin until killed: the load a busy CI machine puts beside the suites. */
function busyLoops(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

const suites = plan();
const spinners = busyLoops(load);
const results: RunResult[] = [];
const record = () =>
  writeResults('suites-under-load', measuredCode, {
    busyLoops: load,
    runs,
    suites: suites.map(({ suite, files }) => ({
      suite,
      files,
      timeoutMs: timeoutOf(suite),
      concurrency: SUITES[suite].concurrency,
    })),
    results,
    // Written after every suite's run: a run cut short keeps what finished, and says so.
    complete: results.length === runs * suites.length,
    allGreen: results.every((r) => r.exitCode === 0 && r.fail === 0 && r.cancelled === 0),
  });
const stop = () => {
  spinners.forEach((p) => p.kill('SIGKILL'));
  running?.kill('SIGTERM');
};
process.on('exit', stop);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    stop();
    process.exit(130);
  });
try {
  for (let run = 1; run <= runs; run++) {
    for (const { suite, files } of suites) {
      const r = await runSuite(suite, files, run);
      results.push(r);
      console.log(
        `run ${run} ${suite}: ${r.pass}/${r.tests} passed, ${r.fail} failed, ${r.cancelled} cancelled, ${r.seconds} s${r.failed.length ? ` (not ok: ${r.failed.join('; ')})` : ''}`,
      );
      record();
    }
  }
} finally {
  stop();
}
