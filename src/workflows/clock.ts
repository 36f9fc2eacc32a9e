/**
 * The one place workflow code reads the clock. Inside the workflow sandbox `Date` is Temporal's
 * deterministic clock (the time of the current workflow task), so replays see the same values.
 */
export function workflowNowIso(): string {
  // eslint-disable-next-line no-restricted-globals -- deterministic in the workflow sandbox (see above)
  return new Date().toISOString();
}
