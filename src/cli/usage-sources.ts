import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { z } from 'zod';
import { workerGpus } from '../domain/spec/experiment.js';
import { CostSchema } from '../domain/usage/gpu-usage.js';
import { ManifestSchema } from '../domain/run/manifest.js';
import { manifestPath } from '../domain/spec/paths.js';
import {
  type RunUsage,
  runUsageOfManifest,
  runUsageWhileRunning,
  runUsageWithoutManifest,
} from '../domain/usage/usage.js';
import { readParsedIfPresent } from '../report/load-run.js';
import { SearchAttributes as K } from '../workflows/search-attributes.js';
import { type ListFilters, listQuery } from './list-query.js';
import { startInput } from './report-locate.js';

/** What visibility says of one experiment: no history read. */
export interface VisibleRun {
  workflowId: string;
  runId: string;
  /** Absent on runs started before owners existed: then the manifest's, else '-'. */
  owner?: string;
  team?: string;
  running: boolean;
  startedAt: string;
  closedAt?: string;
  /** RagenGpuSeconds, set when the run ends. */
  gpuSeconds?: number;
}

export function visibleRun(w: WorkflowExecutionInfo): VisibleRun {
  const sa = w.typedSearchAttributes;
  const gpuSeconds = sa.get(K.gpuSeconds);
  return {
    workflowId: w.workflowId,
    runId: w.runId,
    owner: sa.get(K.owner),
    team: sa.get(K.team),
    running: w.status.name === 'RUNNING',
    startedAt: w.startTime.toISOString(),
    ...(w.closeTime ? { closedAt: w.closeTime.toISOString() } : {}),
    ...(gpuSeconds === undefined ? {} : { gpuSeconds }),
  };
}

// An experiment's input, read loosely (inputs of older versions still parse): where its manifest is, its GPUs, its price.
const StartedExperiment = z.object({
  spec: z.object({
    name: z.string(),
    storage: z.object({ archiveDir: z.string() }),
    cluster: z.object({
      workerGroups: z.array(z.object({ replicas: z.number(), gpusPerWorker: z.number() })),
    }),
    cost: CostSchema.optional(),
  }),
});
export type StartedExperiment = z.infer<typeof StartedExperiment>['spec'];

export function startedExperiment(input: unknown): StartedExperiment | undefined {
  const parsed = StartedExperiment.safeParse(input);
  return parsed.success ? parsed.data.spec : undefined;
}

/** Why a run is not in the report: printed under it, so totals are never short without a word. */
export interface LeftOut {
  workflowId: string;
  reason: string;
}

/**
 * One experiment's usage: from its manifest once closed (path from its input: name, archiveDir and
 * workflow id), from its GPUs and start while it runs, from RagenGpuSeconds when it closed without one.
 */
export async function runUsageOf(
  v: VisibleRun,
  spec: StartedExperiment | undefined,
  now: string,
): Promise<RunUsage | LeftOut> {
  if (!spec) return { workflowId: v.workflowId, reason: 'its input names no experiment spec' };
  const who = { workflowId: v.workflowId, owner: v.owner ?? '-', team: v.team ?? '-' };
  if (v.running) {
    return runUsageWhileRunning({
      ...who,
      startedAt: v.startedAt,
      gpus: workerGpus(spec),
      now,
      ...(spec.cost ? { price: spec.cost } : {}),
    });
  }
  const path = manifestPath(spec.storage.archiveDir, spec.name, v.workflowId);
  const manifest = await readParsedIfPresent(path, ManifestSchema, 'experiment manifest');
  if (manifest) return runUsageOfManifest(manifest, { owner: v.owner, team: v.team });
  if (v.gpuSeconds !== undefined && v.closedAt)
    return runUsageWithoutManifest({
      ...who,
      startedAt: v.startedAt,
      closedAt: v.closedAt,
      gpuSeconds: v.gpuSeconds,
    });
  return { workflowId: v.workflowId, reason: `no manifest at ${path} and no RagenGpuSeconds` };
}

/** `f` over `items`, at most `width` at a time, results in order. */
async function inPool<T, R>(items: readonly T[], width: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/**
 * The visibility query for `usage`: experiments only (a campaign's attempts and a sweep's children
 * are experiments; the campaign and the sweep hold no GPUs of their own) that started before
 * `until` and were running, or closed at or after `since`.
 */
export function usageQuery(f: Pick<ListFilters, 'owner' | 'team'>, since: string, until: string): string {
  return [
    listQuery({ kind: 'experiment', ...f, running: false }),
    `StartTime < '${until}'`,
    `(ExecutionStatus = 'Running' OR CloseTime >= '${since}')`,
  ].join(' AND ');
}

/**
 * Each visible experiment's usage, 16 at a time: `inputOf` gives a run's start input (the first
 * history event; the bench hands in a fake), then its manifest is read.
 */
export async function usageOfRuns(
  visible: readonly VisibleRun[],
  inputOf: (v: VisibleRun) => Promise<unknown>,
  now: string,
): Promise<{ runs: RunUsage[]; leftOut: LeftOut[] }> {
  const results = await inPool(visible, 16, async (v) =>
    runUsageOf(v, startedExperiment(await inputOf(v)), now),
  );
  const runs: RunUsage[] = [];
  const leftOut: LeftOut[] = [];
  for (const r of results)
    if ('reason' in r) leftOut.push(r);
    else runs.push(r);
  return { runs, leftOut };
}

/** Every matching experiment's usage: one visibility listing, then per run its input's first event and its manifest. */
export async function collectUsage(
  client: Client,
  query: string,
  now: string,
): Promise<{ runs: RunUsage[]; leftOut: LeftOut[] }> {
  const visible: VisibleRun[] = [];
  const seen = new Set<string>();
  for await (const w of client.workflow.list({ query, pageSize: 1000 })) {
    // An id listed twice (a reset, an id reused) has one manifest path: its newest run (listed first) counts.
    if (seen.has(w.workflowId)) continue;
    seen.add(w.workflowId);
    visible.push(visibleRun(w));
  }
  return usageOfRuns(visible, (v) => startInput(client, v.workflowId, v.runId), now);
}
