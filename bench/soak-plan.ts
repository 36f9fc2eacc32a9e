/**
 * The soak's seeded fault schedule and its expected-outcome rule: pure, so a seed always plans the
 * same runs and the rule can be read in one place.
 */

export const FAULT_KINDS = [
  'worker-kill',
  'raylet-kill',
  'head-kill',
  'driver-kill',
  'raylet-stop',
  'server-restart',
  'disk-full',
  'cancel',
  'pause-resume',
  'terminate',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults that end a run by design; at most one is planned per run. */
export const ENDING: ReadonlySet<FaultKind> = new Set(['cancel', 'terminate', 'disk-full']);
/** Faults that take the target's Ray cluster (or its trainer) down: a plain experiment cannot recover. */
export const CLUSTER_LOSS: ReadonlySet<FaultKind> = new Set(['raylet-kill', 'head-kill', 'driver-kill']);

export interface PlannedFault {
  kind: FaultKind;
  /** early: counted from the run's start (cluster start, join); training: from its first checkpoint. */
  trigger: 'early' | 'training';
  delayMs: number;
  /** raylet-stop: SIGCONT after this many ms; absent: never continued. */
  contAfterMs?: number;
}

export interface RunPlan {
  index: number;
  kind: 'campaign' | 'sweep';
  faults: PlannedFault[];
}

/** mulberry32: a small seeded PRNG, enough for a replayable schedule. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function planRuns(seed: number, runs: number): RunPlan[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const plans: RunPlan[] = [];
  for (let index = 0; index < runs; index++) {
    const kind = rnd() < 0.3 ? 'sweep' : 'campaign';
    // A sweep's children are plain experiments: no pause (a campaign signal); no disk fill (one volume for both children).
    const allowed = FAULT_KINDS.filter(
      (k) => kind === 'campaign' || (k !== 'pause-resume' && k !== 'disk-full'),
    );
    const r = rnd();
    const count = r < 0.5 ? 1 : r < 0.85 ? 2 : 3;
    const faults: PlannedFault[] = [];
    const trigger = rnd() < 0.25 ? 'early' : 'training';
    const firstDelay = trigger === 'early' ? 4000 + Math.floor(rnd() * 16000) : Math.floor(rnd() * 6000);
    while (faults.length < count) {
      const k = pick(allowed);
      if (faults.some((f) => f.kind === k)) continue;
      if (ENDING.has(k) && faults.some((f) => ENDING.has(f.kind))) continue;
      // Later faults land within a few seconds of the first: they overlap.
      const delayMs = faults.length === 0 ? firstDelay : firstDelay + Math.floor(rnd() * 4000);
      const contAfterMs = k === 'raylet-stop' && rnd() < 0.5 ? 3000 + Math.floor(rnd() * 5000) : undefined;
      faults.push({ kind: k, trigger, delayMs, ...(contAfterMs !== undefined ? { contAfterMs } : {}) });
    }
    plans.push({ index, kind, faults: faults.sort((a, b) => a.delayMs - b.delayMs) });
  }
  return plans;
}

export interface FiredFault {
  kind: FaultKind;
  at: number;
  contAfterMs?: number;
  /** The target's training was done when it fired (its last step logged): a lost node then fails nothing. */
  afterTraining?: boolean;
}

/**
 * The expected outcome from the faults that actually fired (one planned after the run ended never
 * fires). Campaign budgets (6 attempts, 3 without a new checkpoint) exceed the faults one run gets
 * (at most 3), so a campaign ends as its first ending fault says, else succeeded:
 *   terminate -> terminated; cancel -> cancelled; disk-full -> failed (CheckpointDiskFull, fatal);
 *   worker-kill, raylet-kill, head-kill, driver-kill, raylet-stop, server-restart, pause-resume -> succeeded.
 * A sweep (2 children, one at a time, faults aimed at child 0) ends terminated or cancelled as its
 * first ending fault says; otherwise it completes, child 0 failed when it lost its cluster or
 * trainer (raylet/head/driver kill, a raylet stopped and never continued: a plain experiment does not
 * retry) before its last training step, else both succeed.
 */
export function expectedOutcome(kind: RunPlan['kind'], fired: readonly FiredFault[]): string {
  const ending = [...fired].sort((a, b) => a.at - b.at).find((f) => ENDING.has(f.kind));
  if (ending?.kind === 'terminate') return 'terminated';
  if (ending?.kind === 'cancel') return 'cancelled';
  if (kind === 'campaign') return ending?.kind === 'disk-full' ? 'failed' : 'succeeded';
  const lost = fired.some(
    (f) =>
      !f.afterTraining &&
      (CLUSTER_LOSS.has(f.kind) || (f.kind === 'raylet-stop' && f.contAfterMs === undefined)),
  );
  return lost ? 'completed 1 ok 1 failed' : 'completed 2 ok 0 failed';
}
