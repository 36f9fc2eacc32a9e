/**
 * The CI's own time as a results file: `bash scripts/test.sh --results <name>` runs this at the end
 * of a green run with the phases file the run wrote (test-output/ci-phases.json: each phase's start,
 * end and duration in seconds from the run's start). The Go builds' phases tell a cold run (minutes)
 * from a warm one (seconds). The load average of the run's start and end is in the numbers: the
 * record's own `loadavg` is taken as this script starts, at the run's end.
 *
 * Usage: npx tsx bench/ci-time.ts <phases.json> <results name, e.g. ci-warm>
 */
import { readFileSync } from 'node:fs';
import { writeResults } from './results.js';

interface Phases {
  commit: string;
  dirty: boolean;
  date: string;
  loadavg: { atStart: number[]; atEnd: number[] };
  exit: number;
  seconds: number;
  phases: { name: string; start: number; end: number; seconds: number; result: string }[];
}

const [file, name] = process.argv.slice(2);
if (!file || !name) {
  console.error('usage: npx tsx bench/ci-time.ts <phases.json> <results name>');
  process.exit(2);
}
const run = JSON.parse(readFileSync(file, 'utf8')) as Phases;
if (run.exit !== 0 || run.phases.some((p) => p.result !== 'ok')) {
  console.error(`${file}: not a green run (exit ${run.exit}): no results written`);
  process.exit(1);
}
const minutes = (s: number) => Math.round((s / 60) * 10) / 10;
// The numbers move with every suite's tests as well; these are the pipeline's own files.
writeResults(
  name,
  [
    'bench/ci-time.ts',
    'scripts/test.sh',
    'scripts/ci-phases.sh',
    'scripts/setup.sh',
    'scripts/k8s',
    'scripts/temporal',
  ],
  {
    totalMinutes: minutes(run.seconds),
    loadavg: run.loadavg,
    phases: run.phases.map((p) => ({ ...p, minutes: minutes(p.seconds) })),
  },
);
