import { z } from 'zod';
import type { ProductMetrics } from './product-metrics.js';

/** What the archive activities carry of a run's end: its outcome and, for experiments, GPU time. */
const ExperimentArchiveArgs = z.object({
  draft: z.object({
    outcome: z.string(),
    gpuUsage: z.object({ allocatedSeconds: z.number(), busySeconds: z.number() }).optional(),
  }),
});
const CampaignArchiveArgs = z.object({ draft: z.object({ outcome: z.string() }) });
const SweepArchiveArgs = z.object({ manifest: z.object({ outcome: z.string() }) });
const ReaperReport = z.object({ entries: z.array(z.object({ action: z.string() })) });

/**
 * A run ends with its archive activity (every outcome archives: the workflows run it in a
 * non-cancellable scope), so a successful archive is the worker-side record of a finished run;
 * a reaper pass's report names what it deleted. Read from activity inputs and results only.
 * GPU time is counted from experiments (campaign attempts and sweep children are experiments),
 * so a campaign's or sweep's total is not counted twice.
 */
export function observeActivityEnd(
  metrics: ProductMetrics,
  activityType: string,
  args: unknown[],
  result: unknown,
): void {
  if (activityType === 'archive') {
    const a = ExperimentArchiveArgs.safeParse(args[0]);
    if (!a.success) return;
    metrics.runsFinished.inc({ kind: 'experiment', outcome: a.data.draft.outcome });
    const usage = a.data.draft.gpuUsage;
    if (usage) {
      metrics.gpuSecondsAllocated.inc(usage.allocatedSeconds);
      metrics.gpuSecondsBusy.inc(usage.busySeconds);
    }
  } else if (activityType === 'archiveCampaign') {
    const a = CampaignArchiveArgs.safeParse(args[0]);
    if (a.success) metrics.runsFinished.inc({ kind: 'campaign', outcome: a.data.draft.outcome });
  } else if (activityType === 'archiveSweep') {
    const a = SweepArchiveArgs.safeParse(args[0]);
    if (a.success) metrics.runsFinished.inc({ kind: 'sweep', outcome: a.data.manifest.outcome });
  } else if (activityType === 'reapClusters') {
    const r = ReaperReport.safeParse(result);
    if (!r.success) return;
    metrics.reaperDeletions.inc(r.data.entries.filter((e) => e.action === 'deleted').length);
  }
}
