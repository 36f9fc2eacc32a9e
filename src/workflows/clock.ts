/**
 * The one place workflow code reads the clock. Inside the workflow sandbox `Date` is Temporal's
 * deterministic clock (the time of the current workflow task), so replays see the same values.
 */
export function workflowNowIso(): string {
  // eslint-disable-next-line no-restricted-globals -- deterministic in the workflow sandbox (see above)
  return new Date().toISOString();
}

/** Seconds between two ISO times (pure arithmetic on strings the workflow recorded). */
export function secondsBetween(startIso: string, endIso: string): number {
  // eslint-disable-next-line no-restricted-globals -- Date.parse is pure: no clock is read
  return (Date.parse(endIso) - Date.parse(startIso)) / 1000;
}
