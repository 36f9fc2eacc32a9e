import type { z } from 'zod';
import { CampaignManifestSchema } from '../domain/campaign/campaign.js';
import { ManifestSchema } from '../domain/run/manifest.js';
import { MetricsSummarySchema, type MetricsSeries } from '../domain/train/metrics-series.js';
import type { StageRecord } from '../domain/run/results.js';
import { SweepManifestSchema } from '../domain/sweep/sweep.js';

/**
 * The experiment manifest as the report reads it: the archive's schema, plus the optional metrics
 * summary (last and best per key) that newer train activities add; older manifests have none.
 */
export const ReportManifestSchema = ManifestSchema.extend({ metrics: MetricsSummarySchema.optional() });
export type ReportManifest = z.infer<typeof ReportManifestSchema>;
export { CampaignManifestSchema, SweepManifestSchema };

/** A run's metrics series, or why there is none (older runs have no file). */
export type SeriesOrReason = { series: MetricsSeries } | { missing: string };

export interface ExperimentData {
  dir: string;
  manifest: ReportManifest;
  series: SeriesOrReason;
  /** Every stage record to teardown, from the workflow's result; absent with --from (the manifest's list stops at archive). */
  completeStages?: StageRecord[];
}

export interface ChildData {
  workflowId: string;
  series: SeriesOrReason;
}

export interface SweepData {
  dir: string;
  manifest: z.infer<typeof SweepManifestSchema>;
  /** Series of the children whose curves are drawn (the top ones), by workflow id. */
  children: ChildData[];
}

export interface AttemptData {
  workflowId: string;
  manifest?: ReportManifest;
  manifestMissing?: string;
  series: SeriesOrReason;
}

export interface CampaignData {
  dir: string;
  manifest: z.infer<typeof CampaignManifestSchema>;
  attempts: AttemptData[];
}

/** What the user asked for: extra metric keys, how many sweep children to overlay. */
export interface ReportOptions {
  keys: string[];
  top: number;
}
