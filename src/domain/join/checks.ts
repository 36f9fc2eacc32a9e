import { z } from 'zod';

/** The all-reduce check's budget when the spec sets none: a real NCCL init across nodes takes tens of seconds. */
export const ALLREDUCE_SECONDS_DEFAULT = 180;

/**
 * The checks run on a joined cluster before training. `allReduceSeconds` bounds the all-reduce
 * itself, counted from the moment every probe actor has started (actor start and torch import are
 * not in it: a slow image start must not read as a slow network and resubmit the cluster).
 */
export const ChecksSchema = z.strictObject({
  allReduceSeconds: z.number().int().positive().default(ALLREDUCE_SECONDS_DEFAULT),
});
export type Checks = z.infer<typeof ChecksSchema>;

/** The budget of a spec; a spec from a workflow started before `checks` existed has none. */
export function allReduceSeconds(spec: { checks?: Checks }): number {
  return spec.checks?.allReduceSeconds ?? ALLREDUCE_SECONDS_DEFAULT;
}
