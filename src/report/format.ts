/** Short, plain renderings of values for tables (escaped later by the renderer). */
export function fmtNumber(v: number | undefined | null, digits = 4): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '—';
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(digits)));
}

export function fmtSeconds(s: number): string {
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(2)} h`;
}

export function fmtValue(v: unknown): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'number') return fmtNumber(v);
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}
