/**
 * `npx tsx bench/usage-report.ts [workflows]`: time of `usage` for `workflows` experiments (default
 * 10,000) over 30 days, 8 teams, 40 owners; 1% still running. No server: visibility's rows and each
 * run's start input are made here (the listing and the first-event reads are not timed), the
 * manifests are real files in a temporary archive folder. Timed, median of 5 after one warm-up:
 * the per-run reads (input → manifest path → read and parse the manifest), then the aggregation
 * and rendering, by day and by week, as table and as html.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderUsage } from '../src/cli/usage.js';
import { type VisibleRun, usageOfRuns } from '../src/cli/usage-sources.js';
import type { Manifest } from '../src/domain/run/manifest.js';
import { manifestPath } from '../src/domain/spec/paths.js';
import { testManifest } from '../test/helpers/report-fixtures.js';
import { testInput, testSpec } from '../test/helpers/specs.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/usage-report.ts',
  'src/cli/usage.ts',
  'src/cli/usage-sources.ts',
  'src/cli/usage-format.ts',
  'src/domain/usage/usage.ts',
  'src/domain/usage/gpu-usage.ts',
];

const workflows = Number(process.argv[2] ?? 10_000);
const root = await mkdtemp(join(tmpdir(), 'bench-usage-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const DAY = 86_400_000;
const T0 = Date.parse('2026-12-01T10:00:00.000Z'); // testManifest's origin
const SINCE = '2026-11-01T00:00:00.000Z';
const NOW = new Date('2026-12-01T00:00:00.000Z');

/** One manifest moved `shiftMs` earlier than testManifest's origin, as another workflow: ids and times only. */
function variant(template: Manifest, workflowId: string, shiftMs: number): Manifest {
  const move = (t: string) => new Date(Date.parse(t) - shiftMs).toISOString();
  return {
    ...template,
    temporal: { ...template.temporal, workflowId },
    stages: template.stages.map((s) => ({
      ...s,
      startedAt: move(s.startedAt),
      ...(s.endedAt ? { endedAt: move(s.endedAt) } : {}),
    })),
    gpuUsage: template.gpuUsage && {
      ...template.gpuUsage,
      ...(template.gpuUsage.openUntil ? { openUntil: move(template.gpuUsage.openUntil) } : {}),
    },
    writtenAt: move(template.writtenAt),
  };
}

try {
  const spec = testSpec({}, root);
  const input = testInput(spec);
  const template = testManifest('template', root, { steps: 1000 });
  const visible: VisibleRun[] = [];
  for (let i = 0; i < workflows; i++) {
    const workflowId = `bench-usage-${i}`;
    const shiftMs = Math.floor((((i * 7919) % workflows) / workflows) * 30 * DAY) + DAY / 2;
    const running = i % 100 === 99;
    const who = { owner: `user-${i % 40}`, team: `team-${i % 8}` };
    const startedAt = new Date(T0 - shiftMs).toISOString();
    visible.push({
      workflowId,
      runId: 'r',
      ...who,
      running,
      startedAt,
      ...(running ? {} : { closedAt: startedAt }),
    });
    if (running) continue;
    const path = manifestPath(spec.storage.archiveDir, spec.name, workflowId);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, JSON.stringify(variant(template, workflowId, shiftMs), null, 1));
  }
  const inputOf = () => Promise.resolve(input); // the first history event, as the server would give it

  const readMs: number[] = [];
  let read = await usageOfRuns(visible, inputOf, NOW.toISOString());
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    read = await usageOfRuns(visible, inputOf, NOW.toISOString());
    readMs.push(performance.now() - t);
  }
  if (read.leftOut.length > 0) throw new Error(`left out: ${read.leftOut[0]!.reason}`);
  console.log(
    `reads: ${read.runs.length} runs in ${median(readMs).toFixed(0)} ms (median of ${readMs.length})`,
  );

  const renders: { by: string; format: string; medianMs: number; rows: number; bytes: number }[] = [];
  for (const by of ['day', 'week'] as const) {
    for (const format of ['table', 'html'] as const) {
      const times: number[] = [];
      let out = await renderUsage(read.runs, [], { since: SINCE, by, format, currency: 'USD' }, NOW);
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        out = await renderUsage(read.runs, [], { since: SINCE, by, format, currency: 'USD' }, NOW);
        times.push(performance.now() - t);
      }
      const row = {
        by,
        format,
        medianMs: median(times),
        rows: out.report.rows.length,
        bytes: out.text.length,
      };
      renders.push(row);
      console.log(`aggregate + ${format} by ${by}: ${row.rows} rows in ${row.medianMs.toFixed(0)} ms`);
    }
  }
  const total = read.runs.length;
  writeResults('usage-report', measuredCode, {
    workflows,
    running: visible.filter((v) => v.running).length,
    manifestsRead: total - visible.filter((v) => v.running).length,
    readsMedianMs: median(readMs),
    renders,
    note: 'no server: the visibility listing and the first-event reads (one RPC each, 16 at a time) are not in these times',
  });
} finally {
  await rm(root, { recursive: true, force: true });
}
