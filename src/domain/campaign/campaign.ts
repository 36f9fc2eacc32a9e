import { z } from 'zod';
import { ExperimentSpecSchema } from '../spec/experiment.js';
import { GpuUsageSchema } from '../usage/gpu-usage.js';
import { ResolvedProvenanceSchema } from '../run/provenance.js';
import { DeletedCheckpointSchema } from '../checkpoints/retention.js';
import { CheckpointRecordSchema, StageRecordSchema } from '../run/results.js';
import { TrackingOutcomeSchema } from '../tracking/tracking.js';

const PositiveInt = z.number().int().positive();

/** `earlyStopped`: an attempt's trainer stopped early on its own; RAGEN would stop again, so the campaign ends. */
export const CampaignOutcomeSchema = z.enum(['succeeded', 'failed', 'cancelled', 'earlyStopped']);

/** Budgets of a campaign: how many attempts, and how many in a row may end without a new checkpoint. */
export const CampaignBudgetsSchema = z.strictObject({
  maxAttempts: PositiveInt.default(5),
  maxAttemptsWithoutNewCheckpoint: PositiveInt.default(2),
  /** Continue-as-new between attempts once the history has this many events (lineage is carried). */
  historyEventsBeforeContinueAsNew: PositiveInt.default(2000),
});
export type CampaignBudgets = z.infer<typeof CampaignBudgetsSchema>;

/** A campaign spec: an experiment spec plus a `campaign:` block of budgets. */
export const CampaignSpecSchema = z.strictObject({
  experiment: ExperimentSpecSchema,
  budgets: CampaignBudgetsSchema,
});
export type CampaignSpec = z.infer<typeof CampaignSpecSchema>;

/** Why an attempt ended: the failure type (or `paused`, `cancelled`, `succeeded`) and its message. */
export const AttemptEndSchema = z.strictObject({ type: z.string(), message: z.string() });
export type AttemptEnd = z.infer<typeof AttemptEndSchema>;

/** Lineage of one attempt (one child `experiment` workflow). */
export const AttemptRecordSchema = z.strictObject({
  attempt: z.number().int().positive(),
  workflowId: z.string(),
  /** `…/global_step_N` it resumed from; absent = fresh start. */
  startedFrom: z.string().optional(),
  startedFromStep: z.number().int().min(0),
  /** Why the previous attempt ended (absent for the first). */
  previousEnded: AttemptEndSchema.optional(),
  totalTrainingSteps: z.number().int().positive(),
  /** preempted: Kueue took the cluster's quota back (ClusterPreempted); like a pause, not a failure. */
  outcome: z.enum(['succeeded', 'failed', 'cancelled', 'paused', 'earlyStopped', 'preempted']),
  ended: AttemptEndSchema,
  finalStep: z.number().optional(),
  /** Latest complete checkpoint after the attempt. */
  checkpointStepAfter: z.number().int().min(0),
  manifestPath: z.string(),
  submits: z.number().optional(),
  /** Cluster GPUs x train-stage seconds (or the attempt's wall time when the child reported no stages). */
  gpuSeconds: z.number(),
  /** Allocated (cluster lifetime) and busy GPU-seconds of the attempt; absent when the child returned no result. */
  gpuUsage: GpuUsageSchema.optional(),
  stages: z.array(StageRecordSchema).optional(),
  startedAt: z.string(),
  endedAt: z.string(),
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/** What the campaign carries across continue-as-new. */
export const CampaignStateSchema = z.strictObject({
  attempts: z.array(AttemptRecordSchema),
  totalTrainingSteps: z.number().int().positive(),
  paused: z.boolean(),
  attemptsWithoutNewCheckpoint: z.number().int().min(0),
  latestCheckpointStep: z.number().int().min(0),
  /** Runs of this campaign before the current one (continue-as-new count). */
  continuedAsNew: z.number().int().min(0),
  /** History length of each finished run, for the per-attempt history numbers. */
  historyEventsPerRun: z.array(z.number()),
});
export type CampaignState = z.infer<typeof CampaignStateSchema>;

export const CampaignInputSchema = z.strictObject({
  spec: ExperimentSpecSchema,
  budgets: CampaignBudgetsSchema,
  provenance: ResolvedProvenanceSchema,
  state: CampaignStateSchema.optional(),
});
export type CampaignInput = z.infer<typeof CampaignInputSchema>;

/** What the `progress` query answers. */
export const CampaignProgressSchema = z.strictObject({
  phase: z.enum(['checking', 'running', 'paused', 'done']),
  attempt: z.number().int().min(0),
  step: z.number(),
  lastCheckpointStep: z.number(),
  totalTrainingSteps: z.number(),
  gpuSeconds: z.number(),
  paused: z.boolean(),
  continuedAsNew: z.number(),
});
export type CampaignProgress = z.infer<typeof CampaignProgressSchema>;

/** One checkpoint the campaign has seen complete: its hash is fixed the first time it is seen. */
export const LedgerEntrySchema = CheckpointRecordSchema.extend({ firstSeenAt: z.string() });
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;
export const CheckpointLedgerSchema = z.strictObject({
  checkpoints: z.array(LedgerEntrySchema),
  /** Checkpoints removed by storage.retain (their entries above stay: the ledger only grows). */
  deleted: z.array(DeletedCheckpointSchema).optional(),
});
export type CheckpointLedger = z.infer<typeof CheckpointLedgerSchema>;

export const LatestCheckpointSchema = z.strictObject({
  /** Highest step whose folder is at or below the tracker and whose files match the ledger's hashes. */
  latest: z.strictObject({ step: z.number(), path: z.string(), sha256: z.string() }).optional(),
  checkpoints: z.array(z.strictObject({ step: z.number(), sha256: z.string() })),
  /** Ledger entries whose files changed or vanished: never resumed from, reported in the manifest. */
  untrusted: z.array(z.strictObject({ step: z.number(), reason: z.string() })),
});
export type LatestCheckpoint = z.infer<typeof LatestCheckpointSchema>;

export const CampaignResultSchema = z.strictObject({
  outcome: CampaignOutcomeSchema,
  reason: z.string().optional(),
  attempts: z.array(AttemptRecordSchema),
  finalStep: z.number().optional(),
  latestCheckpointStep: z.number(),
  gpuSeconds: z.number(),
  manifestPath: z.string().optional(),
  historyEventsPerRun: z.array(z.number()),
  /** The campaign's parent run in the experiment tracker; absent when none is configured. */
  tracking: TrackingOutcomeSchema.optional(),
});
export type CampaignResult = z.infer<typeof CampaignResultSchema>;

/** The campaign manifest (`campaign.json`): links every attempt's manifest. Written once. */
export const CampaignManifestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  campaign: z.string(),
  experiment: z.string(),
  temporal: z.strictObject({
    workflowId: z.string(),
    runId: z.string(),
    namespace: z.string(),
    taskQueue: z.string(),
  }),
  budgets: CampaignBudgetsSchema,
  provenance: ResolvedProvenanceSchema,
  checkpointDir: z.string(),
  totalTrainingSteps: z.number(),
  outcome: CampaignOutcomeSchema,
  reason: z.string().optional(),
  attempts: z.array(AttemptRecordSchema.extend({ manifestSha256: z.string().optional() })),
  checkpoints: z.array(z.strictObject({ step: z.number(), sha256: z.string() })),
  untrusted: LatestCheckpointSchema.shape.untrusted,
  /** Checkpoints deleted by storage.retain: path, step, hash and why (absent when none were). */
  deleted: z.array(DeletedCheckpointSchema).optional(),
  gpuSeconds: z.number(),
  /** Every attempt's GPU time summed (absent in manifests of older campaigns). */
  gpuUsage: GpuUsageSchema.optional(),
  continuedAsNew: z.number(),
  writtenAt: z.string(),
});
export type CampaignManifest = z.infer<typeof CampaignManifestSchema>;
export type CampaignManifestDraft = Omit<
  CampaignManifest,
  'schemaVersion' | 'checkpoints' | 'untrusted' | 'attempts'
> & { attempts: AttemptRecord[]; ledgerPath: string };

/** Step of a `…/global_step_N` path (pure; used by workflows). */
export function stepOfCheckpointPath(path: string | undefined): number {
  const m = path ? /global_step_(\d+)\/?$/.exec(path) : null;
  return m?.[1] ? Number(m[1]) : 0;
}
