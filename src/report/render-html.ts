import { CLIENT_SCRIPT } from './client-script.js';
import { fmtSeconds } from './format.js';
import type { Gantt, ReportModel, Section, TableModel } from './view-model.js';

/** The charting library, inlined so the page opens offline (read by report-assets.ts). */
export interface ReportAssets {
  uplotJs: string;
  uplotCss: string;
}

/** Every string from a file goes through here before it reaches the page's HTML. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that is safe inside <script>: no `</script>`, no HTML comment openers, no JS line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Inlined code must not close its own <script>/<style> element early. */
function inlineSafe(code: string, tag: 'script' | 'style'): string {
  return code.replace(new RegExp(`</${tag}`, 'gi'), `<\\/${tag}`);
}

function table(t: TableModel): string {
  const head = t.header.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  return `<h3>${escapeHtml(t.title)}</h3>\n<div class="table-wrap"><table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

const OUTCOME_COLOR: Record<string, string> = {
  succeeded: '#4c9f70',
  failed: '#d62728',
  cancelled: '#8c8c8c',
  skipped: '#bbbbbb',
  earlyStopped: '#ff7f0e',
  running: '#1f77b4',
};

/** The stage timeline as an SVG Gantt chart, idle GPU spans hatched over it (drawn here: no script needed). */
export function ganttSvg(g: Gantt): string {
  const labelWidth = 190;
  const plotWidth = 820;
  const rowHeight = 22;
  const top = 10;
  const rowsHeight = g.bars.length * rowHeight;
  const idleRows = g.idle.length * 16;
  const height = top + rowsHeight + 30 + idleRows + 10;
  const total = g.total > 0 ? g.total : 1;
  const xOf = (t: number) => labelWidth + (Math.min(Math.max(t, 0), total) / total) * plotWidth;
  const parts: string[] = [];
  parts.push(
    `<defs><pattern id="idle-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#d6272822"/><line x1="0" y1="0" x2="0" y2="8" stroke="#d62728" stroke-width="3"/></pattern></defs>`,
  );
  g.idle.forEach((s) => {
    const x = xOf(s.start);
    const w = Math.max(2, xOf(s.end) - x);
    parts.push(
      `<rect class="idle" x="${x.toFixed(1)}" y="${top}" width="${w.toFixed(1)}" height="${rowsHeight}" fill="url(#idle-hatch)" opacity="0.8"><title>${escapeHtml(`${s.label}: ${fmtSeconds(s.seconds)} idle, ${s.gpuSeconds.toFixed(1)} GPU-seconds`)}</title></rect>`,
    );
  });
  g.bars.forEach((b, i) => {
    const y = top + i * rowHeight;
    const x = xOf(b.start);
    const w = Math.max(2, xOf(b.end) - x);
    const color = OUTCOME_COLOR[b.outcome] ?? '#1f77b4';
    const tip = `${b.label}: ${fmtSeconds(b.end - b.start)}${b.open ? ' (no end recorded)' : ''}, ${b.outcome}${b.error ? ` — ${b.error}` : ''}`;
    parts.push(
      `<text x="${labelWidth - 6}" y="${y + 15}" text-anchor="end">${escapeHtml(b.label)}</text>`,
      `<rect class="stage" x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowHeight - 6}" fill="${color}"${b.open ? ' fill-opacity="0.45" stroke-dasharray="4 3" stroke="#333"' : ''}><title>${escapeHtml(tip)}</title></rect>`,
    );
  });
  const axisY = top + rowsHeight + 14;
  for (let i = 0; i <= 4; i++) {
    const t = (total * i) / 4;
    parts.push(
      `<text x="${xOf(t).toFixed(1)}" y="${axisY}" text-anchor="middle" class="axis">${escapeHtml(fmtSeconds(t))}</text>`,
    );
  }
  g.idle.forEach((s, i) => {
    parts.push(
      `<text x="${labelWidth}" y="${axisY + 18 + i * 16}" class="idle-label">${escapeHtml(`▨ ${s.label}: ${fmtSeconds(s.seconds)} idle × ${g.gpus} GPUs = ${s.gpuSeconds.toFixed(1)} GPU-seconds`)}</text>`,
    );
  });
  return `<svg class="gantt" viewBox="0 0 ${labelWidth + plotWidth + 20} ${height}" width="${labelWidth + plotWidth + 20}" height="${height}" role="img" aria-label="stage timeline">${parts.join('')}</svg>`;
}

function section(s: Section): string {
  const notes = s.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('\n');
  const charts = s.charts.map((c) => `<div class="chart" id="chart-${escapeHtml(c.id)}"></div>`).join('\n');
  const gantt = s.gantt
    ? `<p class="note">${escapeHtml(`Seconds from ${s.gantt.origin}.`)}</p>\n${ganttSvg(s.gantt)}`
    : '';
  return `<section>\n<h2>${escapeHtml(s.title)}</h2>\n${notes}\n${gantt}\n${charts}\n${s.tables.map(table).join('\n')}\n</section>`;
}

const PAGE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { margin: 0 0 4px; font-size: 22px; } h2 { margin-top: 32px; border-bottom: 1px solid #ddd; } h3 { font-size: 15px; }
.subtitle { color: #555; font-family: monospace; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; }
.note { color: #555; margin: 4px 0; }
.chart { margin: 12px 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td { max-width: 640px; overflow-wrap: anywhere; } th { background: #f4f4f4; }
svg.gantt text { font: 12px system-ui, sans-serif; } svg.gantt .axis { fill: #666; } svg.gantt .idle-label { fill: #b01c1c; }
`;

/** One self-contained page: uPlot and its CSS inlined, the view model embedded as JSON, no external reference. */
export function renderReportHtml(model: ReportModel, assets: ReportAssets, generatedAt: string): string {
  const facts = model.facts.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(`${model.title} — ${model.subtitle}`)}</title>
<style>${inlineSafe(assets.uplotCss, 'style')}</style>
<style>${PAGE_CSS}</style>
</head>
<body>
<h1>${escapeHtml(model.title)}</h1>
<div class="subtitle">${escapeHtml(model.subtitle)}</div>
<dl class="facts">${facts}<dt>report written</dt><dd>${escapeHtml(generatedAt)}</dd></dl>
${model.sections.map(section).join('\n')}
<script type="application/json" id="report-data">${scriptJson(model)}</script>
<script>${inlineSafe(assets.uplotJs, 'script')}</script>
<script>${inlineSafe(CLIENT_SCRIPT, 'script')}</script>
</body>
</html>
`;
}
