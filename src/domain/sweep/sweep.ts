import { z } from 'zod';
import { SchedulerSchema, SchedulerStateSchema, ashaRungs } from './asha.js';
import { ExperimentSpecSchema } from '../spec/experiment.js';
import { GpuUsageSchema } from '../usage/gpu-usage.js';
import { ResolvedProvenanceSchema } from '../run/provenance.js';
import { TrackingOutcomeSchema } from '../tracking/tracking.js';
import { SweepLimitChangeSchema } from './sweep-limits.js';
import { DistributionSchema, ParamKeySchema as ParamKey, ParamValueSchema } from './sweep-params.js';
import { TpeSearchSchema } from './sweep-search.js';

export {
  DistributionSchema,
  ParamValueSchema,
  type Distribution,
  type ParamSet,
  type ParamValue,
} from './sweep-params.js';

/**
 * More children than this is refused at load time: the ranked table travels as one Temporal
 * payload (activity input, result), and payloads are capped at 2 MB (about 250 bytes a child).
 */
export const MAX_SWEEP_CHILDREN = 3000;

export const SweepSpecSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/, 'use 1-40 lowercase letters, digits and -'),
    /** The experiment every child starts from (inline, or a path in YAML resolved by the loader). */
    base: ExperimentSpecSchema,
    parameters: z.strictObject({
      /** Every combination of these lists (the cartesian product). */
      grid: z
        .record(ParamKey, z.array(ParamValueSchema).min(1, 'a grid list needs at least one value'))
        .default({}),
      /** `count` samples from a seeded PRNG, each combined with every grid point. */
      random: z
        .strictObject({
          seed: z.number().int().min(0),
          count: z.number().int().positive(),
          params: z.record(ParamKey, DistributionSchema),
        })
        .optional(),
    }),
    /**
     * Model-based search: each child's parameters come from Optuna's TPE (the search worker), asked
     * when the child starts, from the results so far. Absent: grid x random, expanded up front.
     */
    search: TpeSearchSchema.optional(),
    /** Never more children running at once than this. */
    concurrency: z.number().int().positive().default(1),
    /** After this many failed children no new child starts (running ones finish); absent = no limit. */
    failureBudget: z.number().int().positive().optional(),
    objective: z
      .strictObject({
        metric: z.enum(['validation.successRate']).default('validation.successRate'),
        direction: z.enum(['max', 'min']).default('max'),
      })
      .default({ metric: 'validation.successRate', direction: 'max' }),
    /** Early stopping from in-loop validations (asha or median); absent = every child runs to the end. */
    scheduler: SchedulerSchema.optional(),
  })
  .superRefine((spec, ctx) => {
    for (const issue of schedulerIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
    const grid = Object.keys(spec.parameters.grid);
    const random = Object.keys(spec.parameters.random?.params ?? {});
    if (spec.search && (grid.length > 0 || random.length > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['parameters'],
        message: `search.type ${spec.search.type} picks every parameter itself: move the grid and random parameters to search.params (or drop search)`,
      });
    }
    if (!spec.search && grid.length === 0 && random.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['parameters'],
        message: 'nothing to sweep: add parameters.grid lists or parameters.random.params',
      });
    }
    for (const key of grid.filter((k) => random.includes(k))) {
      ctx.addIssue({
        code: 'custom',
        path: ['parameters', 'random', 'params', key],
        message: `'${key}' is both a grid and a random parameter; keep it in one of them`,
      });
    }
    for (const [key, d] of Object.entries(spec.parameters.random?.params ?? {})) {
      const range =
        'uniform' in d
          ? d.uniform
          : 'logUniform' in d
            ? d.logUniform
            : 'intRange' in d
              ? d.intRange
              : undefined;
      if (range && range[0] > range[1]) {
        ctx.addIssue({
          code: 'custom',
          path: ['parameters', 'random', 'params', key],
          message: `the range [${range[0]}, ${range[1]}] is reversed; write [low, high]`,
        });
      }
    }
  });
export type SweepSpec = z.infer<typeof SweepSpecSchema>;

/** A scheduler needs in-loop validations at its rungs, and steps that every child shares. */
function schedulerIssues(spec: {
  base: z.infer<typeof ExperimentSpecSchema>;
  parameters: { grid: Record<string, unknown>; random?: { params: Record<string, unknown> } };
  search?: { params: Record<string, unknown> };
  scheduler?: z.infer<typeof SchedulerSchema>;
}): { path: (string | number)[]; message: string }[] {
  const s = spec.scheduler;
  if (!s) return [];
  const { testFreq, totalTrainingSteps } = spec.base.trainer;
  const issues: { path: (string | number)[]; message: string }[] = [];
  const swept = [
    ...Object.keys(spec.parameters.grid),
    ...Object.keys(spec.parameters.random?.params ?? {}),
    ...Object.keys(spec.search?.params ?? {}),
  ];
  for (const key of ['trainer.testFreq', 'trainer.totalTrainingSteps'].filter((k) => swept.includes(k)))
    issues.push({
      path: ['parameters'],
      message: `'${key}' cannot be swept with a scheduler: every child must validate at the same steps; set it in base`,
    });
  if (testFreq === 0) {
    issues.push({
      path: ['base', 'trainer', 'testFreq'],
      message: `scheduler ${s.type} decides from in-loop validations: set trainer.testFreq > 0 (a divisor of gracePeriod ${s.gracePeriod})`,
    });
    return issues;
  }
  if (s.gracePeriod % testFreq !== 0)
    issues.push({
      path: ['scheduler', 'gracePeriod'],
      message: `gracePeriod ${s.gracePeriod} is not a multiple of trainer.testFreq ${testFreq}: children validate only every ${testFreq} steps; use a multiple of it`,
    });
  if (s.gracePeriod >= totalTrainingSteps)
    issues.push({
      path: ['scheduler', 'gracePeriod'],
      message: `gracePeriod ${s.gracePeriod} must be below trainer.totalTrainingSteps ${totalTrainingSteps}, or nothing is ever stopped`,
    });
  if (s.type === 'asha') {
    const maxSteps = s.maxSteps ?? totalTrainingSteps;
    if (maxSteps > totalTrainingSteps)
      issues.push({
        path: ['scheduler', 'maxSteps'],
        message: `maxSteps ${maxSteps} is above trainer.totalTrainingSteps ${totalTrainingSteps}; no child trains that far`,
      });
    else if (ashaRungs(s, maxSteps).length === 0)
      issues.push({
        path: ['scheduler', 'maxSteps'],
        message: `no rung below maxSteps ${maxSteps} with gracePeriod ${s.gracePeriod}: lower gracePeriod or raise maxSteps`,
      });
  }
  return issues;
}

/** A finished (or refused) child, kept compact: parameters are recomputed from the spec by index. */
export const ChildOutcomeSchema = z.strictObject({
  index: z.number().int().min(0),
  workflowId: z.string(),
  /**
   * earlyStopped: the trainer (RAGEN) stopped training on its own (not a failure; no validation ran).
   * pruned: the sweep's scheduler (asha, median) stopped it at a rung; its checkpoints are kept.
   */
  outcome: z.enum(['succeeded', 'failed', 'cancelled', 'earlyStopped', 'pruned']),
  successRate: z.number().optional(),
  manifestPath: z.string().optional(),
  error: z.string().optional(),
  /** Allocated GPU-seconds (cluster GPUs x cluster lifetime) and busy ones (x train time). */
  gpuSeconds: z.number().optional(),
  busyGpuSeconds: z.number().optional(),
  /** The scheduler's metric at the child's last in-loop validation: [step, value]. */
  lastIntermediate: z.tuple([z.number(), z.number()]).optional(),
  /** Why the scheduler stopped it (outcome pruned). */
  pruned: z.strictObject({ rung: z.number(), reason: z.string() }).optional(),
  /** ASHA promotions: each resumed the child (a new workflow) from its last kept checkpoint. */
  promotions: z
    .array(z.strictObject({ rung: z.number(), fromStep: z.number(), workflowId: z.string() }))
    .optional(),
});
export type ChildOutcome = z.infer<typeof ChildOutcomeSchema>;

/** What continue-as-new carries from one run of the sweep to the next. */
export const SweepCarrySchema = z.strictObject({
  nextIndex: z.number().int().min(0),
  results: z.array(ChildOutcomeSchema),
  runs: z.number().int().positive(),
  maxRunning: z.number().int().min(0),
  /** Changes made by `sweep set` (the last one is in force); absent = the spec's own limits. */
  limitChanges: z.array(SweepLimitChangeSchema).optional(),
  /** The scheduler's rungs and reports so far (asha/median). */
  scheduler: SchedulerStateSchema.optional(),
  /** search tpe: the parameters the search answered so far, by child index. */
  searched: z.array(z.record(z.string(), ParamValueSchema)).optional(),
});
export type SweepCarry = z.infer<typeof SweepCarrySchema>;

export const SweepInputSchema = z.strictObject({
  sweep: SweepSpecSchema,
  provenance: ResolvedProvenanceSchema,
  /** search tpe: the search worker's task queue; absent = ragen-search. */
  searchTaskQueue: z.string().optional(),
  /** The child workflow type; `experiment` unless a test or benchmark swaps in a stand-in. */
  childWorkflowType: z.string().default('experiment'),
  /** Continue-as-new once the history has this many events (or the server suggests it). */
  historyEventLimit: z.number().int().positive().default(5000),
  carry: SweepCarrySchema.optional(),
});
export type SweepInput = z.input<typeof SweepInputSchema>;

/** A child in the ranked table: its outcome, its parameters and its rank (1 = best). */
export const SweepRowSchema = ChildOutcomeSchema.extend({
  params: z.record(z.string(), ParamValueSchema),
  rank: z.number().int().positive().optional(),
});
export type SweepRow = z.infer<typeof SweepRowSchema>;

export const SweepResultSchema = z.strictObject({
  sweepId: z.string(),
  total: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  pruned: z.number().optional(),
  notStarted: z.number(),
  stoppedByFailureBudget: z.boolean(),
  /** Runs of the workflow (1 + continue-as-new count). */
  runs: z.number(),
  /** Highest number of children running at once, as the workflow counted them. */
  maxRunning: z.number(),
  ranked: z.array(SweepRowSchema),
  manifestPath: z.string().optional(),
  csvPath: z.string().optional(),
  /** The sweep's parent run in the experiment tracker; absent when none is configured. */
  tracking: TrackingOutcomeSchema.optional(),
});
export type SweepResult = z.infer<typeof SweepResultSchema>;

/** What the `sweepStatus` query answers. */
export const SweepStatusSchema = z.strictObject({
  total: z.number(),
  started: z.number(),
  running: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  pruned: z.number().optional(),
  stoppedByFailureBudget: z.boolean(),
  runs: z.number(),
  best: z.strictObject({ index: z.number(), workflowId: z.string(), value: z.number() }).optional(),
  /** The limits in force (they change with `sweep set`). */
  concurrency: z.number(),
  failureBudget: z.number().optional(),
});
export type SweepStatus = z.infer<typeof SweepStatusSchema>;

/** The archived sweep manifest (`sweep.json`): written once, never overwritten. */
export const SweepManifestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  sweep: z.string(),
  temporal: z.strictObject({
    workflowId: z.string(),
    runId: z.string(),
    namespace: z.string(),
    taskQueue: z.string(),
  }),
  provenance: ResolvedProvenanceSchema,
  spec: SweepSpecSchema,
  objective: z.strictObject({ metric: z.string(), direction: z.enum(['max', 'min']) }),
  counts: z.strictObject({
    total: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    cancelled: z.number(),
    pruned: z.number().optional(),
    notStarted: z.number(),
  }),
  stoppedByFailureBudget: z.boolean(),
  outcome: z.enum(['succeeded', 'failed', 'cancelled']),
  children: z.array(SweepRowSchema),
  /** Every child's GPU time summed (absent in manifests of older sweeps). */
  gpuUsage: GpuUsageSchema.optional(),
  /** Concurrency / failure-budget changes made while it ran (`sweep set`). */
  limitChanges: z.array(SweepLimitChangeSchema).optional(),
  writtenAt: z.string(),
});
export type SweepManifest = z.infer<typeof SweepManifestSchema>;
