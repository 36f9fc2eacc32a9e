/**
 * Local worker slots: the stand-in for a fleet's machines. A local cluster's workers are processes
 * of this host, so "a node" that can be bad is a slot, numbered 0..LOCAL_WORKER_SLOTS-1 and named
 * `local-slot-<n>` to Ray (RAGEN_ORCH_NODE_NAME), the probe and the node ledger. A cluster's k-th
 * worker takes the k-th slot the ledger does not exclude, so a suspect slot is not started again.
 */

/** 16 nodes per host at most (preflight's capacity check), one of them the head. */
export const LOCAL_WORKER_SLOTS = 15;

export function localSlotName(slot: number): string {
  return `local-slot-${slot}`;
}

/** The first `count` slots not named in `avoid`; undefined when too few are left. */
export function assignSlots(count: number, avoid: readonly string[]): number[] | undefined {
  const free = Array.from({ length: LOCAL_WORKER_SLOTS }, (_, s) => s).filter(
    (s) => !avoid.includes(localSlotName(s)),
  );
  return free.length >= count ? free.slice(0, count) : undefined;
}

/**
 * Test stand-in for a degraded NIC on the local backend: RAGEN_ORCH_STANDIN_SLOW_LOCAL_SLOTS="1,3"
 * makes the probe's fetches on those slots 0.3 s slower (no local link can be really slow). Never
 * set in production; a typo is an error, not a silently healthy slot.
 */
export function standinSlowSlots(value: string | undefined): Set<number> {
  if (!value) return new Set();
  return new Set(
    value.split(',').map((part) => {
      const slot = Number(part.trim());
      if (!Number.isInteger(slot) || slot < 0 || slot >= LOCAL_WORKER_SLOTS)
        throw new Error(
          `RAGEN_ORCH_STANDIN_SLOW_LOCAL_SLOTS: "${part}" is not a slot 0..${LOCAL_WORKER_SLOTS - 1}`,
        );
      return slot;
    }),
  );
}

/** The probe's environment variable for it (probes/ragen_probes/allreduce_rank.py). */
export const STANDIN_SLOW_PULL_ENV = 'RAGEN_ORCH_STANDIN_SLOW_PULL_S';

/** The seconds each fetch of a stand-in slow slot's probe rank is delayed by. */
export const STANDIN_SLOW_PULL_S = '0.3';
