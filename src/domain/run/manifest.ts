import { z } from 'zod';
import { ClusterHandleSchema, RayNodeSchema } from '../cluster/cluster.js';
import { CodeSourceSchema } from '../code/code.js';
import { CodeCommitsSchema } from '../code/code-commits.js';
import { ExperimentSpecSchema } from '../spec/experiment.js';
import { EarlyStopSchema, ExperimentOutcomeSchema, PruningSchema } from './experiment-input.js';
import { GpuUsageSchema } from '../usage/gpu-usage.js';
import { EnvironmentRecordSchema } from '../join/environment-probe.js';
import { ImageVerificationSchema } from '../spec/image.js';
import { MetricsSummarySchema } from '../train/metrics-series.js';
import { ResolvedProvenanceSchema } from './provenance.js';
import {
  AllReduceResultSchema,
  CheckpointRecordSchema,
  PreflightCheckSchema,
  OutcomeSchema,
  StageRecordSchema,
  ValidationResultSchema,
} from './results.js';

/** Everything needed to reproduce a run (design.md, "The manifest"). Written once, never overwritten. */
export const ManifestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  experiment: z.string(),
  temporal: z.strictObject({
    workflowId: z.string(),
    runId: z.string(),
    namespace: z.string(),
    taskQueue: z.string(),
  }),
  provenance: ResolvedProvenanceSchema,
  /** Which code trained (from the image's labels) and which orchestrator ran it; absent in manifests of older runs. */
  commits: CodeCommitsSchema.optional(),
  image: ImageVerificationSchema,
  /** Where the trained code came from: the image, the worker's Python (local), or a shipped tree (spec `code`); absent in older manifests. */
  code: CodeSourceSchema.optional(),
  rayVersion: z.strictObject({
    declared: z.string(),
    planned: z.string().optional(),
    observedOnHead: z.string().optional(),
  }),
  environment: z.strictObject({
    envTag: z.string(),
    overrides: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    /** The environment probe's findings on every node (absent in manifests of runs before it, or that failed before it ran). */
    probe: EnvironmentRecordSchema.optional(),
  }),
  seeds: z.strictObject({ train: z.number(), val: z.number() }),
  resolvedSpec: ExperimentSpecSchema,
  entrypoint: z.array(z.string()),
  cluster: z.strictObject({
    backend: z.enum(['local', 'kuberay']),
    handle: ClusterHandleSchema.optional(),
    shape: z.strictObject({
      headCpus: z.number(),
      workerGroups: z.array(
        z.strictObject({ name: z.string(), replicas: z.number(), gpusPerWorker: z.number() }),
      ),
    }),
    nodes: z.array(RayNodeSchema),
    submits: z.number(),
  }),
  preflight: z.strictObject({
    checks: z.array(PreflightCheckSchema),
    allReduce: AllReduceResultSchema.optional(),
  }),
  resumedFrom: z.string().optional(),
  checkpointDir: z.string(),
  checkpoints: z.array(CheckpointRecordSchema),
  training: OutcomeSchema.extend({
    finalStep: z.number().optional(),
    totalTrainingSteps: z.number(),
    earlyStopped: EarlyStopSchema.optional(),
  }),
  validation: OutcomeSchema.extend({
    result: ValidationResultSchema.omit({ records: true }).passthrough().optional(),
    resultsPath: z.string().optional(),
  }),
  stages: z.array(StageRecordSchema),
  /** Last and best value of each trainer metric with its step (metrics-summary.json); absent in older manifests. */
  metrics: MetricsSummarySchema.optional(),
  /** GPU-seconds (absent in manifests of older runs); the cluster is counted until the manifest is written. */
  gpuUsage: GpuUsageSchema.optional(),
  /** A sweep's scheduler (asha, median) stopped the run: the rung, the step and why. */
  pruned: PruningSchema.optional(),
  outcome: ExperimentOutcomeSchema,
  writtenAt: z.string(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** What the workflow knows; the archive activity adds checkpoint hashes and writes it. */
export type ManifestDraft = Omit<Manifest, 'checkpoints' | 'writtenAt' | 'schemaVersion'>;
