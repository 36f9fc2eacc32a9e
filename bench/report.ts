/**
 * `npx tsx bench/report.ts [steps] [keys]`: size of the HTML report and time to write it for an
 * experiment with a `steps`-step metrics series of `keys` metric keys (default 1,000 steps, 100
 * keys, about what RAGEN's console logs per step), plus a 3-attempt campaign and a 6-child sweep.
 * Time = reading and parsing the files, building the view model, rendering and writing the page
 * (the CLI's path with --from); median of 7 runs after one warm-up.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportCommand } from '../src/cli/report.js';
import { MetricsSeriesSchema } from '../src/domain/train/metrics-series.js';
import { testSeries, writeCampaign, writeExperiment, writeSweep } from '../test/helpers/report-fixtures.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/report.ts',
  'src/report',
  'src/cli/report.ts',
  'test/helpers/report-fixtures.ts',
];

const steps = Number(process.argv[2] ?? 1000);
const keys = Number(process.argv[3] ?? 100);
const root = await mkdtemp(join(tmpdir(), 'bench-report-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pages: { page: string; bytes: number; medianMs: number; runs: number }[] = [];

async function measure(name: string, from: string): Promise<void> {
  const times: number[] = [];
  const out = join(root, `${name}.html`);
  const log = console.log;
  console.log = () => undefined; // the command's own line
  try {
    for (let i = 0; i < 8; i++) {
      const t = performance.now();
      await reportCommand(undefined, { from, out, keys: [], top: 5, force: true });
      if (i > 0) times.push(performance.now() - t);
    }
  } finally {
    console.log = log;
  }
  const bytes = (await stat(out)).size;
  pages.push({ page: name, bytes, medianMs: median(times), runs: times.length });
  console.log(
    `${name}: ${(bytes / 1024).toFixed(0)} KiB, written in ${median(times).toFixed(0)} ms (median of ${times.length})`,
  );
}

try {
  const base = testSeries(steps);
  const series = MetricsSeriesSchema.parse({
    ...base,
    points: base.points.map((p) => ({
      ...p,
      values: {
        ...p.values,
        ...Object.fromEntries(
          Array.from({ length: keys - 4 }, (_, k) => [`extra/metric_${k}`, Math.sin(p.step + k)]),
        ),
      },
    })),
  });
  const seriesBytes = JSON.stringify(series).length;
  console.log(
    `experiment series: ${steps} steps x ${keys} keys (${(seriesBytes / 1024).toFixed(0)} KiB of JSON)`,
  );
  await measure(`experiment (${steps} steps)`, await writeExperiment(root, 'bench-exp', { steps, series }));
  await measure('campaign (3 attempts, 1,000 steps)', await writeCampaign(root));
  await measure('sweep (6 children, top 5 overlaid)', await writeSweep(root));
  writeResults('report', measuredCode, { steps, keys, seriesBytes, pages });
} finally {
  await rm(root, { recursive: true, force: true });
}
