import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ReportAssets } from './render-html.js';

/** uPlot's browser build and CSS from the installed npm package (inlined into every report). */
export async function loadReportAssets(): Promise<ReportAssets> {
  const dist = dirname(createRequire(import.meta.url).resolve('uplot'));
  const [uplotJs, uplotCss] = await Promise.all([
    readFile(join(dist, 'uPlot.iife.min.js'), 'utf8'),
    readFile(join(dist, 'uPlot.min.css'), 'utf8'),
  ]);
  return { uplotJs, uplotCss };
}
