/**
 * `usage --format html` in headless Debian Chromium with the network cut off: no console or page
 * error, both charts drew their series, the table and the totals are on the page. A screenshot
 * lands in test-output/usage.png.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import puppeteer, { type Browser } from 'puppeteer-core';
import { CommandSchemas, parseCommand } from '../../src/cli/options.js';
import { renderUsage } from '../../src/cli/usage.js';
import { runUsageOfManifest, runUsageWhileRunning } from '../../src/domain/usage/usage.js';
import { drawnCharts, openOffline } from '../helpers/report-page.js';
import { usageWorld } from '../helpers/usage-fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const OUT = resolve('test-output');

describe('usage HTML in headless Chromium, offline', { timeout: 60_000 }, () => {
  let browser: Browser;
  let root: string;
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} missing: scripts/setup.sh installs Debian's chromium`);
    root = await mkdtemp(join(tmpdir(), 'usage-html-'));
    await mkdir(OUT, { recursive: true });
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('charts GPU-hours per day and per team, and lists the rows', async () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const runs = [
      ...usageWorld().all.map((m) => runUsageOfManifest(m)),
      runUsageWhileRunning({
        workflowId: 'exp-live',
        owner: 'ana',
        team: 'vision',
        startedAt: '2026-12-03T06:00:00Z',
        gpus: 2,
        now: now.toISOString(),
      }),
    ];
    const input = parseCommand('usage', CommandSchemas.usage, {
      since: '2026-12-01',
      format: 'html',
      pricePerGpuHour: '2',
    });
    const { report, text } = await renderUsage(runs, [], input, now);
    assert.doesNotMatch(text, /<(script|link|img)[^>]+(src|href)=/i, 'nothing is loaded from elsewhere');
    const file = join(root, 'usage.html');
    await writeFile(file, text);

    const { page, problems } = await openOffline(browser, file);
    const charts = await drawnCharts(page);
    await page.screenshot({ path: join(OUT, 'usage.png'), fullPage: true });
    const body = await page.$eval('body', (b) => b.innerText);
    await page.close();

    assert.deepEqual(problems, [], problems.join('\n'));
    assert.deepEqual(
      charts.map((c) => [c.id, c.points]),
      [
        ['usage-gpu-hours', 6], // 3 days x (allocated, busy)
        ['usage-teams', 9], // 3 days x 3 teams
      ],
    );
    for (const c of charts)
      assert.ok(c.colourPixels > 30, `chart ${c.id} drew its series (${c.colourPixels} px)`);
    assert.equal(report.total.runs, 9);
    assert.match(body, /experiments\s+9 \(1 running/);
    assert.match(body, /cost \(USD\)/);
    assert.match(body, /2026-12-02\s+nlp\s+cy\s+2/);
  });
});
