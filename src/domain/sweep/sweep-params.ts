/** What a sweep parameter is: its key, its values and the distributions random search draws from. */
import { z } from 'zod';

/** A swept value: what a `key=value` override or a scalar spec field can hold. */
export const ParamValueSchema = z.union([z.string(), z.number(), z.boolean()]);
export type ParamValue = z.infer<typeof ParamValueSchema>;

/** `trainer.seedTrain`, `validation.seed` (spec fields) or any trainer override such as `algorithm.lr`. */
export const ParamKeySchema = z
  .string()
  .regex(/^\+?[A-Za-z_][\w.@-]*$/, 'a parameter key like trainer.seedTrain or algorithm.lr');

/** One random parameter: a list to choose from, or a numeric range (bounds inclusive). */
export const DistributionSchema = z.union([
  z.strictObject({ choice: z.array(ParamValueSchema).min(1, 'choice needs at least one value') }),
  z.strictObject({ uniform: z.tuple([z.number(), z.number()]) }),
  z.strictObject({ logUniform: z.tuple([z.number().positive(), z.number().positive()]) }),
  z.strictObject({ intRange: z.tuple([z.number().int(), z.number().int()]) }),
]);
export type Distribution = z.infer<typeof DistributionSchema>;

/** One child's parameters: key → value, keys in expansion order. */
export type ParamSet = Record<string, ParamValue>;
