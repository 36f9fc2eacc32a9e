import { z } from 'zod';

export const ValidationResultSchema = z
  .object({
    /** Which runner validated: the payload's (`ragen_toy.validate`) or the trainer itself (`trainer.val_only=True`). */
    runner: z.enum(['payload', 'trainer']).optional(),
    env_tag: z.string().optional(),
    checkpoint: z.string(),
    step: z.number(),
    episodes: z.number(),
    seed: z.number(),
    /** The validation environments' seeds, seed .. seed + episodes - 1. */
    seeds: z.object({ first: z.number(), last: z.number() }).optional(),
    success_rate: z.number(),
    /** `val-env/<tag>/pass@k` by k, where the trainer printed it. */
    pass_at_k: z.record(z.string(), z.number()).optional(),
    mean_reward: z.number().optional(),
    mean_actions: z.number().optional(),
    /** Per-episode records: the payload's runner writes them; the trainer prints only aggregates. */
    records: z
      .array(
        z
          .object({
            seed: z.number(),
            success: z.union([z.boolean(), z.number()]),
            reward: z.number(),
            actions: z.number(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();
export type ValidationResult = z.infer<typeof ValidationResultSchema>;

export const AllReduceResultSchema = z
  .object({
    ok: z.boolean(),
    path: z.string(),
    world_size: z.number(),
    bytes: z.number().optional(),
    latency_ms: z.number().optional(),
    bus_bandwidth_gbps: z.number().optional(),
    reason: z.string().optional(),
  })
  .passthrough();
export type AllReduceResult = z.infer<typeof AllReduceResultSchema>;

/** mtimeMs: when the file was hashed; a later stat that finds the same size and mtime reuses the hash. */
export const CheckpointFileSchema = z.strictObject({
  path: z.string(),
  bytes: z.number(),
  sha256: z.string(),
  mtimeMs: z.number().optional(),
});
export const CheckpointRecordSchema = z.strictObject({
  step: z.number(),
  path: z.string(),
  /** sha256 over the sorted list of `<relative path> <file sha256>` lines. */
  sha256: z.string(),
  files: z.array(CheckpointFileSchema),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecordSchema>;

export const StageOutcomeSchema = z.enum(['succeeded', 'failed', 'cancelled', 'skipped', 'earlyStopped']);
export type StageOutcome = z.infer<typeof StageOutcomeSchema>;

export const StageRecordSchema = z.strictObject({
  stage: z.enum([
    'preflight',
    'verify',
    'submit',
    /** Waiting for Kueue to admit the cluster (kuberay.queueName); before it, the wait was part of join. */
    'queued',
    'join',
    'train',
    'validate',
    'archive',
    'teardown',
  ]),
  attempt: z.number(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  outcome: StageOutcomeSchema.optional(),
  error: z.string().optional(),
});
export type StageRecord = z.infer<typeof StageRecordSchema>;
export type StageName = StageRecord['stage'];

export const OutcomeSchema = z.strictObject({ outcome: StageOutcomeSchema, error: z.string().optional() });
export type Outcome = z.infer<typeof OutcomeSchema>;

export const PreflightCheckSchema = z.strictObject({ name: z.string(), ok: z.boolean(), detail: z.string() });
export type PreflightCheck = z.infer<typeof PreflightCheckSchema>;
