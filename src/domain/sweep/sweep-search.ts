/** `search: {type: tpe, trials, seed, params}`: model-based search (Optuna's TPE in the search worker). */
import { z } from 'zod';
import { type Distribution, DistributionSchema, type ParamSet, ParamKeySchema } from './sweep-params.js';

const TYPES = ['choice', 'uniform', 'logUniform', 'intRange'] as const;

/**
 * One searched parameter: the random search's distributions, with what a model-based search needs
 * on top: exactly one known type, a range with room in it, a choice between at least two values.
 */
const TpeDistributionSchema = z.record(z.string(), z.unknown()).superRefine((raw, ctx) => {
  const keys = Object.keys(raw);
  const unknown = keys.filter((k) => !(TYPES as readonly string[]).includes(k));
  if (unknown.length > 0 || keys.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown parameter type ${JSON.stringify(keys.join(', '))}: give exactly one of choice: [..], uniform: [low, high], logUniform: [low, high] or intRange: [low, high]`,
    });
    return;
  }
  const parsed = DistributionSchema.safeParse(raw);
  if (!parsed.success) {
    ctx.addIssue({
      code: 'custom',
      message: `${keys[0]}: ${parsed.error.issues[0]?.message ?? 'bad value'}; write [low, high] (choice: a list of values)`,
    });
    return;
  }
  const d = parsed.data;
  if ('choice' in d) {
    if (new Set(d.choice).size < 2)
      ctx.addIssue({
        code: 'custom',
        message:
          'a choice with one value leaves nothing to search: list two or more values, or set it in base',
      });
    return;
  }
  const [low, high] = rangeOf(d);
  if (!(low < high))
    ctx.addIssue({
      code: 'custom',
      message: `the range [${low}, ${high}] is empty: write [low, high] with low below high (or set a fixed value in base)`,
    });
});

function rangeOf(d: Exclude<Distribution, { choice: unknown }>): [number, number] {
  if ('uniform' in d) return d.uniform;
  if ('logUniform' in d) return d.logUniform;
  return d.intRange;
}

export const TpeSearchSchema = z.strictObject({
  type: z.literal('tpe'),
  /** How many children (trials) the search starts in all. */
  trials: z.number().int().min(1, 'trials must be at least 1: the number of children to try'),
  seed: z.number().int().min(0).default(0),
  params: z
    .record(ParamKeySchema, TpeDistributionSchema)
    .refine((p) => Object.keys(p).length > 0, 'nothing to search: add one or more params'),
});
export type TpeSearch = z.infer<typeof TpeSearchSchema>;

/** The searched space as the search worker reads it (each value a valid distribution after the schema). */
export const tpeSpace = (search: TpeSearch): Record<string, Distribution> =>
  search.params as Record<string, Distribution>;

/**
 * Parameter sets to validate every child's spec with at load time (the search's values are only
 * known when it runs): every parameter at its low end, then at its high end, and each choice.
 */
export function tpeProbeSets(search: TpeSearch): ParamSet[] {
  const space = Object.entries(tpeSpace(search));
  const at = (pick: (d: Distribution, i: number) => number | string | boolean, i: number) =>
    Object.fromEntries(space.map(([k, d]) => [k, pick(d, i)]));
  const widest = Math.max(2, ...space.map(([, d]) => ('choice' in d ? d.choice.length : 2)));
  return Array.from({ length: widest }, (_, i) =>
    at(
      (d) =>
        'choice' in d ? (d.choice[Math.min(i, d.choice.length - 1)] as string) : rangeOf(d)[i === 0 ? 0 : 1],
      i,
    ),
  );
}

/** The search worker's default task queue (search/ragen_search/worker.py). */
export const SEARCH_TASK_QUEUE = 'ragen-search';

/** tpeAsk's input: the study is the sweep's workflow id, the trial its child's index. */
export interface TpeAskInput {
  study: string;
  index: number;
  seed: number;
  direction: 'max' | 'min';
  space: Record<string, Distribution>;
  /** The sweep's budget: the worker spends a third of it (2 to 10) on random startup trials. */
  trials: number;
}

/** tpeTell's input: complete with the objective's value, pruned with the rung value, or fail. */
export interface TpeTellInput {
  study: string;
  index: number;
  state: 'complete' | 'pruned' | 'fail';
  value?: number;
  step?: number;
}

/** The activities the search worker (Python) serves on its own task queue. */
export interface SearchActivities {
  /** Idempotent per (study, index): a retry answers the same trial's parameters. */
  tpeAsk(input: TpeAskInput): Promise<ParamSet>;
  /** Idempotent per (study, index): answers the trial's state; a finished trial is never told again. */
  tpeTell(input: TpeTellInput): Promise<string>;
}

/** What Optuna is told about a child that ended: its row's outcome, value and last rung value. */
export function tellOf(row: {
  outcome: string;
  successRate?: number;
  lastIntermediate?: [number, number];
}): Pick<TpeTellInput, 'state' | 'value' | 'step'> {
  if (row.outcome === 'succeeded' && row.successRate !== undefined)
    return { state: 'complete', value: row.successRate };
  if (row.outcome === 'pruned')
    return row.lastIntermediate
      ? { state: 'pruned', step: row.lastIntermediate[0], value: row.lastIntermediate[1] }
      : { state: 'pruned' };
  return { state: 'fail' };
}
