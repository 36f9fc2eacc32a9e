import { z } from 'zod';

const PositiveInt = z.number().int().positive();

/**
 * `storage.retain`: which checkpoints a campaign keeps (absent = every one, as before). A checkpoint
 * is kept when ANY rule keeps it: among the `latest` N, among the `best` K by a metric, or at a
 * multiple of `every` S steps. The orchestrator deletes the others between attempts; verl's own
 * rotation stays off (`max_actor_ckpt_to_keep=null`), so nothing is deleted that was not recorded.
 */
export const RetainSchema = z
  .strictObject({
    latest: PositiveInt.optional(),
    best: z
      .strictObject({
        count: PositiveInt,
        /** A metric of the step lines, such as val-env/CoordSokoban/success (in-loop validation). */
        metric: z.string().min(1),
        mode: z.enum(['max', 'min']).default('max'),
      })
      .optional(),
    every: PositiveInt.optional(),
  })
  .refine((r) => r.latest !== undefined || r.best !== undefined || r.every !== undefined, {
    message: 'retain needs latest, best or every (leave retain out to keep every checkpoint)',
  });
export type Retain = z.infer<typeof RetainSchema>;

/** One deletion as the ledger and the campaign manifest record it. */
export const DeletedCheckpointSchema = z.strictObject({
  step: z.number(),
  path: z.string(),
  sha256: z.string(),
  why: z.string(),
  deletedAt: z.string(),
});
export type DeletedCheckpoint = z.infer<typeof DeletedCheckpointSchema>;

export interface RetentionCandidate {
  step: number;
  path: string;
  sha256: string;
}

export interface RetentionPlan {
  keep: { step: number; why: string[] }[];
  delete: (RetentionCandidate & { why: string })[];
}

/**
 * Which of the complete, hashed checkpoints to delete (pure). `protect` (the resume candidate, a
 * checkpoint an attempt's manifest names as validated) is never deleted, whatever the rules say.
 * With `best`, a checkpoint whose metric value is unknown is kept: its rank cannot be known.
 */
export function retentionPlan(
  candidates: readonly RetentionCandidate[],
  retain: Retain,
  protect: readonly { step: number; why: string }[],
  valueAt: Readonly<Record<number, number>> = {},
): RetentionPlan {
  const byStep = [...candidates].sort((a, b) => a.step - b.step);
  const reasons = new Map<number, string[]>(byStep.map((c) => [c.step, []]));
  const add = (step: number, why: string) => reasons.get(step)?.push(why);
  for (const p of protect) add(p.step, p.why);
  if (retain.latest !== undefined)
    for (const c of byStep.slice(-retain.latest)) add(c.step, `latest ${retain.latest}`);
  if (retain.every !== undefined)
    for (const c of byStep.filter((c) => c.step % (retain.every as number) === 0))
      add(c.step, `every ${retain.every} steps`);
  const { best } = retain;
  if (best) {
    const valued = byStep.filter((c) => valueAt[c.step] !== undefined);
    for (const c of byStep.filter((c) => valueAt[c.step] === undefined))
      add(c.step, `no ${best.metric} value at step ${c.step} (best ${best.count} cannot rank it)`);
    const sign = best.mode === 'max' ? -1 : 1;
    // Best first; a tie goes to the later step (it trained longer).
    valued.sort(
      (a, b) => sign * ((valueAt[a.step] as number) - (valueAt[b.step] as number)) || b.step - a.step,
    );
    for (const c of valued.slice(0, best.count))
      add(c.step, `best ${best.count} by ${best.metric} (${valueAt[c.step]})`);
  }
  const plan: RetentionPlan = { keep: [], delete: [] };
  for (const c of byStep) {
    const why = reasons.get(c.step) ?? [];
    if (why.length > 0) plan.keep.push({ step: c.step, why });
    else plan.delete.push({ ...c, why: deletionReason(retain, c.step, valueAt[c.step]) });
  }
  return plan;
}

function deletionReason(retain: Retain, step: number, value: number | undefined): string {
  const parts: string[] = [];
  if (retain.latest !== undefined) parts.push(`not among the latest ${retain.latest}`);
  if (retain.best) parts.push(`not among the best ${retain.best.count} by ${retain.best.metric} (${value})`);
  if (retain.every !== undefined) parts.push(`step ${step} is not a multiple of ${retain.every}`);
  return `storage.retain: ${parts.join(', ')}`;
}
