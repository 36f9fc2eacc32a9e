/**
 * `usage` short of the server: its flags, the manifests read from an archive folder the way the
 * command reads them (path from each run's input), the table, CSV and JSON forms. The visibility
 * listing itself is in test/integration/visibility.test.ts's world; here runs are given as visibility would.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandSchemas, parseCommand } from '../../src/cli/options.js';
import { renderUsage } from '../../src/cli/usage.js';
import { type VisibleRun, runUsageOf, startedExperiment, usageQuery } from '../../src/cli/usage-sources.js';
import type { RunUsage } from '../../src/domain/usage/usage.js';
import { UsageError } from '../../src/config/user-errors.js';
import { cli } from '../helpers/cli-process.js';
import { testManifest, writeExperiment } from '../helpers/report-fixtures.js';
import { testInput, testSpec } from '../helpers/specs.js';

const parse = (raw: object) => parseCommand('usage', CommandSchemas.usage, raw);

describe('usage flags', () => {
  it('parses dates to UTC instants and fills the defaults', () => {
    assert.deepEqual(parse({ since: '2026-12-01', until: '2026-12-02T09:30:00+02:00' }), {
      since: '2026-12-01T00:00:00.000Z',
      until: '2026-12-02T07:30:00.000Z',
      by: 'day',
      format: 'table',
      currency: 'USD',
    });
    assert.equal(parse({ since: '2026-12-01', pricePerGpuHour: '2.5' }).pricePerGpuHour, 2.5);
  });

  it('bad input is a UsageError (exit 2) naming the flag', () => {
    const cases: [object, RegExp][] = [
      [{ since: 'yesterday' }, /usage: --since: expected a date like 2026-12-01/],
      [{ since: '2026-12-01T09:00' }, /--since: expected a date .* with its zone/],
      [{ since: '2026-02-30' }, /--since: not a calendar date/],
      [{ since: '2026-12-01', by: 'month' }, /usage: --by: expected day or week/],
      [{ since: '2026-12-01', format: 'pdf' }, /--format: expected table, csv, json or html/],
      [{ since: '2026-12-02', until: '2026-12-01' }, /--until: must be later than --since/],
      [{ since: '2026-12-01', pricePerGpuHour: 'cheap' }, /--price-per-gpu-hour: expected a price/],
      [{ since: '2026-12-01', team: "a'b" }, /--team: quotes and backslashes/],
    ];
    for (const [raw, message] of cases) {
      assert.throws(
        () => parse(raw),
        (err: unknown) => err instanceof UsageError && err.exitCode === 2 && message.test(err.message),
        JSON.stringify(raw),
      );
    }
  });

  it('the command exits 2 on --by month before it connects', async () => {
    const r = await cli(['usage', '--since', '2026-12-01', '--by', 'month']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /usage: --by: expected day or week/);
    const none = await cli(['usage']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /required option '--since <date>' not specified/);
  });

  it('asks visibility for experiments only, in the window, with the filters', () => {
    assert.equal(
      usageQuery({ team: 'nlp' }, '2026-12-01T00:00:00.000Z', '2026-12-08T00:00:00.000Z'),
      "RagenKind = 'experiment' AND RagenTeam = 'nlp' AND StartTime < '2026-12-08T00:00:00.000Z' AND (ExecutionStatus = 'Running' OR CloseTime >= '2026-12-01T00:00:00.000Z')",
    );
  });
});

describe('usage from manifests on disk', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'usage-cli-'));
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const visible = (workflowId: string, over: Partial<VisibleRun> = {}): VisibleRun => ({
    workflowId,
    runId: 'r',
    owner: 'ana',
    team: 'vision',
    running: false,
    startedAt: '2026-12-01T10:00:00.000Z',
    closedAt: '2026-12-01T11:00:00.000Z',
    ...over,
  });

  it('reads each closed run from its manifest, counts a running one to now, names what it left out', async () => {
    const spec = testSpec({}, root);
    const input = startedExperiment(testInput(spec));
    await writeExperiment(root, 'exp-a', { series: false });
    await writeExperiment(root, 'exp-b', { series: false, shift: 86_400 });
    const now = '2026-12-03T12:00:00.000Z';
    const results = await Promise.all([
      runUsageOf(visible('exp-a'), input, now),
      runUsageOf(visible('exp-b', { owner: 'bo' }), input, now),
      runUsageOf(visible('exp-live', { running: true, startedAt: '2026-12-03T11:00:00.000Z' }), input, now),
      runUsageOf(visible('exp-early', { gpuSeconds: 7200 }), input, now), // no manifest: its attribute
      runUsageOf(visible('exp-lost'), input, now),
      runUsageOf(visible('not-ours'), startedExperiment({ sweep: {} }), now),
    ]);
    const runs = results.filter((r): r is RunUsage => !('reason' in r));
    const leftOut = results.filter((r) => 'reason' in r);
    assert.deepEqual(
      leftOut.map((l) => l.workflowId),
      ['exp-lost', 'not-ours'],
    );
    const ms = (id: string) => Math.round(testManifest(id, root).gpuUsage!.allocatedSeconds * 1000);
    const input2 = parse({ since: '2026-11-30', until: '2026-12-04', format: 'json' });
    const { report, text } = await renderUsage(runs, leftOut as never[], input2, new Date(now));
    assert.equal(report.total.allocatedMs, ms('exp-a') + ms('exp-b') + 2 * 3_600_000 + 7_200_000);
    assert.equal(report.total.runs, 4);
    assert.equal(report.total.running, 1);
    const json = JSON.parse(text) as { total: { allocatedGpuHours: number }; leftOut: unknown[] };
    assert.equal(json.total.allocatedGpuHours, report.total.allocatedMs / 3_600_000);
    assert.equal(json.leftOut.length, 2);

    const table = (
      await renderUsage(runs, [], { ...input2, format: 'table', pricePerGpuHour: 2 }, new Date(now))
    ).text;
    assert.match(
      table,
      /^BUCKET\s+TEAM\s+OWNER\s+RUNS\s+RUNNING\s+ALLOCATED GPU-H\s+BUSY GPU-H\s+BUSY %\s+COST USD\n/,
    );
    assert.match(table, /\nTOTAL\s+4\s+1\s/);
    const csv = (await renderUsage(runs, [], { ...input2, format: 'csv' }, new Date(now))).text;
    assert.equal(csv.split('\n')[0], 'bucket,team,owner,runs,running,allocated_gpu_hours,busy_gpu_hours');
    assert.equal(csv.trim().split('\n').length, 1 + report.rows.length);
  });
});
