/**
 * The three HTML reports opened in headless Debian Chromium with the network cut off (every request
 * that is not the file itself is aborted and fails the test): no console error, no page error, every
 * uPlot chart drew its series (pixels of the series' colours on its canvas), the Gantt chart has its
 * bars and idle spans. A screenshot of each lands in test-output/. One browser for the whole file.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import puppeteer, { type Browser } from 'puppeteer-core';
import { drawnCharts, openOffline } from '../helpers/report-page.js';
import { reportCommand } from '../../src/cli/report.js';
import { writeCampaign, writeExperiment, writeSweep } from '../helpers/report-fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const OUT = resolve('test-output');

describe('report HTML in headless Chromium, offline', { timeout: 60_000 }, () => {
  let browser: Browser;
  let root: string;
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} missing: scripts/setup.sh installs Debian's chromium`);
    root = await mkdtemp(join(tmpdir(), 'report-html-'));
    await mkdir(OUT, { recursive: true });
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function open(name: string, from: string, extra: { keys?: string[] } = {}) {
    const out = join(root, `${name}.html`);
    const code = await reportCommand(undefined, { from, out, keys: extra.keys ?? [], top: 5, force: false });
    assert.equal(code, 0);
    const html = await readFile(out, 'utf8');
    assert.doesNotMatch(html, /<(script|link|img)[^>]+(src|href)=/i, 'nothing is loaded from elsewhere');
    const { page, problems } = await openOffline(browser, out);
    const charts = await drawnCharts(page);
    await page.screenshot({ path: join(OUT, `report-${name}.png`), fullPage: true });
    const text = await page.$eval('body', (b) => b.innerText);
    const gantt = (await page.evaluate(
      `({ stages: document.querySelectorAll('svg.gantt rect.stage').length, idle: document.querySelectorAll('svg.gantt rect.idle').length })`,
    )) as { stages: number; idle: number };
    await page.close();
    assert.deepEqual(problems, [], problems.join('\n'));
    assert.ok(charts.length > 0, 'the report has charts');
    for (const c of charts) {
      assert.ok(c.points > 0, `chart ${c.id} has points`);
      assert.ok(
        c.colourPixels > 30,
        `chart ${c.id} drew its series (${c.colourPixels} pixels in its colours)`,
      );
    }
    return { charts, text, gantt, bytes: html.length };
  }

  it('experiment: curves of a 1,000-step run, the Gantt chart with idle GPU time, validation, provenance', async () => {
    const dir = await writeExperiment(root, 'exp-report-1');
    const r = await open('experiment', dir, { keys: ['actor/td_error'] });
    assert.deepEqual(
      r.charts.map((c) => c.id),
      ['exp-reward', 'exp-success', 'exp-step-time', 'exp-key-actor_td_error'],
    );
    assert.equal(r.charts[0]!.points, 1000);
    assert.equal(r.gantt.stages, 7, 'one bar per stage record in the manifest (it ends at archive)');
    assert.equal(r.gantt.idle, 2, 'start-up and end spans');
    assert.match(r.text, /cluster ready → training job submitted\s+12\.0 s\s+24/);
    assert.match(r.text, /last checkpoint → archive started/);
    assert.match(r.text, /success_rate\s+0\.8125/);
    assert.match(r.text, /records no time for the first step/);
  });

  it('sweep: objective per child, parameters against it, top children overlaid, ranked table (file text escaped)', async () => {
    const r = await open('sweep', await writeSweep(root));
    assert.deepEqual(
      r.charts.map((c) => c.id),
      [
        'objective',
        'param-algorithm_lr',
        'param-trainer_seedTrain',
        'top-critic_score_mean',
        'top-train_CoordSokoban_success',
      ],
    );
    assert.equal(r.charts[0]!.points, 5, 'five children have a value');
    assert.match(r.text, /TrainingFailed: <script>alert\(1\)<\/script>/, 'shown as text, not run');
  });

  it('campaign: one curve across attempts, resume points and failures marked, a missing series named', async () => {
    const r = await open('campaign', await writeCampaign(root));
    assert.ok(r.charts.some((c) => c.id === 'campaign-critic_score_mean'));
    assert.match(r.text, /attempt 1 failed: TrainingFailed/);
    assert.match(r.text, /attempt 2 resumed from step 300/);
    assert.match(r.text, /attempt 3 resumed from step 600/);
    assert.match(r.text, /Attempt 2 \(campaign-report-1-a2\): no metrics series/);
    assert.equal(r.gantt.stages, 24, "every attempt's stages through teardown");
    assert.equal(r.gantt.idle, 6, 'start-up and end spans of each attempt');
    assert.match(r.text, /a1: last checkpoint → cluster delete requested/);
  });
});
