/**
 * A report page opened in headless Chromium with the network cut off, for the report and usage
 * HTML tests: every request that is not the file itself is aborted and recorded as a problem,
 * with console errors, page errors and dialogs.
 */
import type { Browser, Page } from 'puppeteer-core';
import { pathToFileURL } from 'node:url';

/**
 * Run in the page (browser JavaScript; this project's TypeScript has no DOM types): per chart, the
 * pixels of its canvas within reach of one of its series' colours, i.e. the series were drawn.
 */
const COUNT_COLOUR_PIXELS = `window.__reportCharts.map(function (c) {
  var canvas = document.querySelector('#chart-' + CSS.escape(c.id) + ' canvas');
  var data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  var rgb = c.colors.map(function (hex) { return [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); }); });
  var colourPixels = 0;
  for (var i = 0; i < data.length; i += 4) {
    if (data[i + 3] < 200) continue;
    if (rgb.some(function (k) { return Math.abs(k[0] - data[i]) + Math.abs(k[1] - data[i + 1]) + Math.abs(k[2] - data[i + 2]) < 60; })) colourPixels++;
  }
  return { id: c.id, colourPixels: colourPixels, points: c.points };
})`;

export interface ChartCheck {
  id: string;
  colourPixels: number;
  points: number;
}

/** Each chart of the page as drawn: its id, its points and the pixels in its series' colours. */
export async function drawnCharts(page: Page): Promise<ChartCheck[]> {
  const expected = await page.$$eval('.chart', (els) => els.length);
  await page.waitForFunction(`(window.__reportCharts || []).length === ${expected}`, { timeout: 10_000 });
  return (await page.evaluate(COUNT_COLOUR_PIXELS)) as ChartCheck[];
}

/** The file loaded offline; `problems` collects what went wrong in the page. */
export async function openOffline(
  browser: Browser,
  file: string,
): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${(e as Error).message}`));
  page.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.url().startsWith('file:')) void r.continue();
    else {
      problems.push(`network request: ${r.url()}`);
      void r.abort();
    }
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, problems };
}
