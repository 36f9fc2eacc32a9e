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
