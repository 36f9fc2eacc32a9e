import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../src/config/config.js';
import { describe, it } from 'node:test';
import { parseCommand, CommandSchemas } from '../../src/cli/options.js';
import { sourceFromInput } from '../../src/cli/report-locate.js';
import { UsageError } from '../../src/config/user-errors.js';
import { attemptMarkers, stitchedCurves } from '../../src/report/campaign-view.js';
import { alignCurves } from '../../src/report/curves.js';
import { experimentReport } from '../../src/report/experiment-view.js';
import { escapeHtml, renderReportHtml, scriptJson } from '../../src/report/render-html.js';
import { buildGantt } from '../../src/report/timeline.js';
import { withUniqueChartIds } from '../../src/report/write-report.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { testManifest, testSeries, testStages, writeExperiment } from '../helpers/report-fixtures.js';

const options = { keys: [], top: 5 };

describe('report view model (pure)', () => {
  it('idle GPU time: from the manifest, start-up and last checkpoint → archive, validation left out', () => {
    const m = testManifest('exp-1', '/data');
    const g = buildGantt({
      stages: m.stages,
      checkpoints: m.checkpoints,
      gpus: 2,
      complete: false,
      backend: 'local',
    })!;
    assert.deepEqual(
      g.idle.map((s) => [s.label, s.seconds, s.gpuSeconds]),
      [
        ['cluster ready → training job submitted', 12, 24],
        ['last checkpoint → archive started', 5.5, 11],
      ],
    );
    assert.ok(g.unknown.some((u) => /first step/.test(u)));
    assert.ok(g.unknown.some((u) => /written during the archive stage/.test(u)));
    assert.equal(g.bars.find((b) => b.label === 'archive')?.open, true);
  });

  it('idle GPU time: with the result’s stages it runs to the teardown (archive and hashing counted)', () => {
    const m = testManifest('exp-1', '/data');
    const g = buildGantt({
      stages: testStages(2000, true),
      checkpoints: m.checkpoints,
      gpus: 2,
      complete: true,
      backend: 'kuberay',
    })!;
    assert.deepEqual(g.idle[1]!.label, 'last checkpoint → cluster delete requested');
    assert.equal(g.idle[1]!.seconds, 5.5 + 25, 'archive (25 s) held the cluster too');
    assert.ok(g.unknown.some((u) => /shared-storage proof/.test(u)));
    assert.ok(!g.unknown.some((u) => /written during the archive stage/.test(u)));
  });

  it('idle GPU time: checkpoints without mtimes and runs without training say so', () => {
    const m = testManifest('exp-1', '/data');
    const bare = m.checkpoints.map((c) => ({ ...c, files: c.files.map(({ mtimeMs: _, ...f }) => f) }));
    const g = buildGantt({
      stages: m.stages.slice(0, 4),
      checkpoints: bare,
      gpus: 2,
      complete: false,
      backend: 'local',
    })!;
    assert.deepEqual(g.idle, []);
    assert.ok(g.unknown.some((u) => /no join followed by a training stage/.test(u)));
    assert.ok(g.unknown.some((u) => /no file mtimes/.test(u)));
  });

  it('idle GPU time: a run that wrote no checkpoint of its own does not measure the end gap', () => {
    const m = testManifest('exp-1', '/data');
    const old = m.checkpoints.map((c) => ({ ...c, files: c.files.map((f) => ({ ...f, mtimeMs: 0 })) }));
    const g = buildGantt({ stages: m.stages, checkpoints: old, gpus: 2, complete: false, backend: 'local' })!;
    assert.deepEqual(
      g.idle.map((s) => s.label),
      ['cluster ready → training job submitted'],
    );
    assert.ok(g.unknown.some((u) => /predates this run's training/.test(u)));
  });

  it('an experiment without a series says so and still reports timeline, validation and provenance', () => {
    const model = experimentReport(
      {
        dir: '/d',
        manifest: testManifest('exp-1', '/data'),
        series: { missing: 'no metrics series at /d/metrics-series.json' },
      },
      options,
    );
    assert.deepEqual(model.sections[0]!.notes.slice(0, 1), ['no metrics series at /d/metrics-series.json']);
    assert.equal(model.sections[0]!.charts.length, 0);
    assert.deepEqual(
      model.sections.map((s) => s.title),
      ['Training curves', 'Stage timeline', 'Validation', 'Provenance'],
    );
  });

  it('GPU-hours and cost among the facts; a manifest from before them says so', () => {
    const manifest = testManifest('exp-1', '/data');
    const priced = {
      ...manifest,
      gpuUsage: {
        gpus: 2,
        allocatedSeconds: 9000,
        busySeconds: 7200,
        allocatedGpuHours: 2.5,
        cost: { pricePerGpuHour: 3, currency: 'USD', allocated: 7.5 },
      },
    };
    const fact = (m: typeof manifest) =>
      experimentReport({ dir: '/d', manifest: m, series: { missing: 'none' } }, options).facts.find(
        ([k]) => k === 'GPU-hours',
      )?.[1];
    assert.equal(fact(priced), '2.5 allocated (2 GPUs), 2 busy training; cost 7.5 USD at 3/GPU-hour');
    assert.match(fact({ ...manifest, gpuUsage: undefined }) ?? '', /^— \(not recorded/);
  });

  it('a key asked for that the series lacks is named', () => {
    const model = experimentReport(
      { dir: '/d', manifest: testManifest('exp-1', '/data'), series: { series: testSeries(50) } },
      { keys: ['nope/x', 'actor/td_error'], top: 5 },
    );
    assert.ok(model.sections[0]!.notes.includes("Key 'nope/x' is not in the series."));
    assert.equal(model.sections[0]!.charts.at(-1)!.title, 'actor/td_error');
  });

  it('campaign curves: one line across attempts, redone steps apart, a hole where an attempt has no data', () => {
    const rec = (from: number) =>
      ({ startedFromStep: from }) as Parameters<typeof stitchedCurves>[0][number]['record'];
    const pts = (a: number, b: number): [number, number][] =>
      Array.from({ length: b - a + 1 }, (_, i) => [a + i, a + i]);
    const [kept, redone] = stitchedCurves(
      [
        { record: rec(0), points: pts(1, 14) },
        { record: rec(10), points: [] },
        { record: rec(20), points: pts(21, 30) },
      ],
      'k',
    );
    assert.deepEqual(
      kept!.points.map((p) => p[0]),
      [...pts(1, 10), ...pts(21, 30)].map((p) => p[0]),
    );
    assert.deepEqual(kept!.gaps, [[10, 21]]);
    assert.deepEqual(
      redone!.points.map((p) => p[0]),
      [11, 12, 13, 14],
    );
    const chart = alignCurves({ id: 'c', title: 'k', xLabel: 'step', yLabel: 'k' }, [kept!, redone!]);
    assert.ok(chart.x.includes(15.5), 'the gap has an x of its own to break the line at');
  });

  it('campaign markers: resumes and non-successful ends, in step order', () => {
    const base = {
      totalTrainingSteps: 30,
      manifestPath: '/m',
      gpuSeconds: 1,
      startedAt: 't',
      endedAt: 't',
      checkpointStepAfter: 10,
    };
    const markers = attemptMarkers(
      [
        {
          ...base,
          attempt: 1,
          workflowId: 'a1',
          startedFromStep: 0,
          outcome: 'failed',
          ended: { type: 'TrainingFailed', message: 'x' },
          finalStep: 14,
        },
        {
          ...base,
          attempt: 2,
          workflowId: 'a2',
          startedFromStep: 10,
          outcome: 'succeeded',
          ended: { type: 'succeeded', message: '' },
          finalStep: 30,
        },
      ],
      () => undefined,
    );
    assert.deepEqual(
      markers.map((m) => [m.x, m.kind, m.label]),
      [
        [10, 'resume', 'attempt 2 resumed from step 10'],
        [14, 'failure', 'attempt 1 failed: TrainingFailed'],
      ],
    );
  });

  it('keys that differ only in punctuation get charts of their own', () => {
    const model = experimentReport(
      { dir: '/d', manifest: testManifest('exp-1', '/data'), series: { series: testSeries(5) } },
      { keys: ['actor/td_error', 'actor/td_error'], top: 5 },
    );
    const ids = withUniqueChartIds(model).sections[0]!.charts.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('strings from files are escaped in HTML and cannot end the embedded JSON script', () => {
    assert.equal(
      escapeHtml(`<img src=x onerror="a('b')">&`),
      '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;',
    );
    const json = scriptJson({ t: '</script><script>alert(1)</script>\u2028' });
    assert.doesNotMatch(json, /<\/script/i);
    assert.deepEqual(JSON.parse(json), { t: '</script><script>alert(1)</script>\u2028' });
    const manifest = testManifest('exp-<b>1</b>', '/data');
    const html = renderReportHtml(
      experimentReport({ dir: '/d', manifest, series: { series: testSeries(10) } }, options),
      { uplotJs: '/*uplot*/', uplotCss: '' },
      'now',
    );
    assert.ok(!html.includes('exp-<b>1</b>') && html.includes('exp-&lt;b&gt;1&lt;/b&gt;'));
  });
});

describe('report command input', () => {
  it('needs a workflow id or --from, and a positive --top', () => {
    assert.throws(
      () => parseCommand('report', CommandSchemas.report, { key: [] }),
      (e: unknown) =>
        e instanceof UsageError && /give the workflow id, or an archive folder with --from/.test(e.message),
    );
    assert.throws(
      () => parseCommand('report', CommandSchemas.report, { from: '/x', top: '0', key: [] }),
      /--top/,
    );
    assert.deepEqual(parseCommand('report', CommandSchemas.report, { from: '/x', key: ['a'] }), {
      from: '/x',
      key: ['a'],
      top: 5,
      force: false,
    });
  });

  it('finds the archive folder of each kind from the workflow input', () => {
    const exp = testInput(testSpec({}, '/data'));
    assert.deepEqual(sourceFromInput('w1', exp), {
      kind: 'experiment',
      dir: '/data/archive/sokoban-test/w1',
    });
    assert.deepEqual(sourceFromInput('c1', { ...exp, budgets: { maxAttempts: 2 } }), {
      kind: 'campaign',
      dir: '/data/archive/sokoban-test/c1',
    });
    assert.deepEqual(sourceFromInput('s1', { sweep: { name: 'lr', base: exp.spec } }), {
      kind: 'sweep',
      dir: '/data/archive/lr/s1',
    });
    assert.throws(() => sourceFromInput('x', { other: 1 }), /not an experiment, sweep or campaign/);
  });
});

/** The CLI as a process, through the package's bin launcher. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'ragen-orchestrator.js'), ...args],
      {
        env: { ...process.env, RAGEN_DEBUG: '' },
      },
    );
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('report through the CLI (--from, no server)', () => {
  it('writes the page, keeps an existing file without --force, names bad input', async () => {
    const root = await mkdtemp(join(tmpdir(), 'report-cli-'));
    try {
      const dir = await writeExperiment(root, 'exp-cli');
      const out = join(root, 'r.html');
      const first = await cli(['report', '--from', dir, '--out', out]);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /^report: .*r\.html \(\d+ KiB, written in [\d.]+ s; opens offline\)/);
      const before = await stat(out);
      const again = await cli(['report', '--from', dir, '--out', out]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /r\.html exists: choose another --out, or add --force to replace it/);
      assert.equal((await stat(out)).mtimeMs, before.mtimeMs, 'the existing file is untouched');
      assert.match(await readFile(out, 'utf8'), /^<!DOCTYPE html>/);
      const none = await cli(['report']);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /give the workflow id, or an archive folder with --from/);
      const empty = await cli(['report', '--from', root]);
      assert.equal(empty.code, 1);
      assert.equal(empty.stderr.trim().split('\n').length, 1, empty.stderr);
      assert.match(empty.stderr, /holds none of manifest\.json, sweep\.json, campaign\.json/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
