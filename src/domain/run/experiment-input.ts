import { z } from 'zod';
import { ExperimentSpecSchema } from '../spec/experiment.js';
import { GpuUsageSchema } from '../usage/gpu-usage.js';
import { ResolvedProvenanceSchema } from './provenance.js';
import { OutcomeSchema, StageRecordSchema } from './results.js';
import { TrackingOutcomeSchema } from '../tracking/tracking.js';

/** Input of the `experiment` workflow: the validated spec plus provenance resolved by the client. */
export const ExperimentInputSchema = z.strictObject({
  spec: ExperimentSpecSchema,
  provenance: ResolvedProvenanceSchema,
  /** Explicit resume (a campaign's next attempt): `…/global_step_N`; absent = fresh start. */
  resumeFrom: z.string().optional(),
  /** A campaign's shared `trainer.default_local_dir`; absent = `<checkpointDir>/<name>/<workflow id>`. */
  checkpointDir: z.string().optional(),
  /** A campaign's checkpoint ledger (hashes recorded once); absent = `<run dir>/checkpoints.json`. */
  ledgerPath: z.string().optional(),
  /** A sweep with a scheduler: send each in-loop validation's `val-env/...` metrics to the parent. */
  reportValidations: z.boolean().optional(),
  /**
   * With reportValidations: only the first validation at or past each of these steps (ASHA's rungs,
   * the only steps it judges at); absent = every validation (median stopping judges them all).
   */
  reportSteps: z.array(z.number().int().positive()).optional(),
});
export type ExperimentInput = z.infer<typeof ExperimentInputSchema>;

/**
 * `paused`: a campaign's pause stopped training after a checkpoint; the cluster was torn down.
 * `earlyStopped`: the trainer (RAGEN) ended training on its own (`early_stopped/*`, exit 0); no validation ran.
 * `pruned`: a sweep's scheduler (asha, median) stopped the run at a rung; checkpoints kept, no validation.
 */
export const ExperimentOutcomeSchema = z.enum([
  'succeeded',
  'failed',
  'cancelled',
  'paused',
  'earlyStopped',
  'pruned',
]);

/** Why a sweep's scheduler stopped the run at a rung (outcome `pruned`): checkpoints kept, no validation. */
export const PruningSchema = z.strictObject({ rung: z.number(), step: z.number(), reason: z.string() });
export type Pruning = z.infer<typeof PruningSchema>;

/** RAGEN's early stop: the step it stopped at and the `early_stopped/<reason>` metrics it logged. */
export const EarlyStopSchema = z.strictObject({ step: z.number(), reasons: z.array(z.string()) });

export const ExperimentResultSchema = z.strictObject({
  outcome: ExperimentOutcomeSchema,
  training: OutcomeSchema.extend({
    finalStep: z.number().optional(),
    earlyStopped: EarlyStopSchema.optional(),
  }),
  validation: OutcomeSchema.extend({ successRate: z.number().optional() }),
  archive: OutcomeSchema.extend({ manifestPath: z.string().optional() }),
  teardown: OutcomeSchema,
  stages: z.array(StageRecordSchema),
  checkpointDir: z.string(),
  submits: z.number(),
  /** The run in the experiment tracker (spec `tracking`); absent when none is configured. */
  tracking: TrackingOutcomeSchema.optional(),
  /** GPU-seconds after teardown. */
  gpuUsage: GpuUsageSchema,
  pruned: PruningSchema.optional(),
});
export type ExperimentResult = z.infer<typeof ExperimentResultSchema>;

/** What the `status` query answers. */
export const ExperimentStatusSchema = z.strictObject({
  stage: z.string(),
  attempt: z.number(),
  joinedWorkers: z.number(),
  gpusRegistered: z.number(),
  /** The join's last word on why it waits (absent once nothing holds it up, and in older runs). */
  joinWaiting: z.string().optional(),
  /** In stage `queued`: the cluster's place in its Kueue LocalQueue (1: next), when known. */
  queuePosition: z.number().optional(),
  lastStep: z.number(),
  lastCheckpointStep: z.number(),
});
export type ExperimentStatus = z.infer<typeof ExperimentStatusSchema>;
