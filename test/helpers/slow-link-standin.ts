/**
 * Stand-in for a degraded NIC on the local backend (no local link can really be slow): the
 * all-reduce probe's fetches on the named worker slots are delayed by 0.3 s. The probe reads the
 * variable (probes/ragen_probes/link_end.py); the test injects it as the backend's workerEnv.
 */
export const STANDIN_SLOW_PULL_ENV = 'RAGEN_ORCH_STANDIN_SLOW_PULL_S';
const STANDIN_SLOW_PULL_S = '0.3';

export function slowLinkStandin(slots: readonly number[]): (slot: number) => Record<string, string> {
  return (slot): Record<string, string> =>
    slots.includes(slot) ? { [STANDIN_SLOW_PULL_ENV]: STANDIN_SLOW_PULL_S } : {};
}
