import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { z } from 'zod';
import { MetricsSeriesSchema } from '../domain/train/metrics-series.js';
import { metricsSeriesPath } from '../domain/spec/paths.js';
import type { StageRecord } from '../domain/run/results.js';
import {
  type AttemptData,
  type CampaignData,
  CampaignManifestSchema,
  type ExperimentData,
  type ReportManifest,
  ReportManifestSchema,
  type SeriesOrReason,
  type SweepData,
  SweepManifestSchema,
} from './inputs.js';
import { withPrunedName } from '../domain/run/pruned-name.js';

/** A file the report needs could not be used: the message names the file and why. */
export class ReportInputError extends Error {
  override name = 'ReportInputError';
}

export type ReportKind = 'experiment' | 'sweep' | 'campaign';

/** The file that marks each kind of archive folder. */
export const KIND_FILES: Record<ReportKind, string> = {
  experiment: 'manifest.json',
  sweep: 'sweep.json',
  campaign: 'campaign.json',
};

async function readJson(path: string): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ReportInputError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ReportInputError(`${path} is not JSON: ${(err as Error).message}`);
  }
}

/** A JSON file parsed by `schema`, or undefined when there is none; unreadable or invalid is a ReportInputError naming the file. */
export async function readParsedIfPresent<S extends z.ZodType>(
  path: string,
  schema: S,
  what: string,
): Promise<z.output<S> | undefined> {
  const raw = await readJson(path);
  if (raw === undefined) return undefined;
  // Manifests written by 1.0.0 before the rename name a pruned run `stoppedEarly` (see pruned-name.ts).
  const parsed = schema.safeParse(withPrunedName(raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ReportInputError(
      `${path} is not a valid ${what}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'}`,
    );
  }
  return parsed.data;
}

async function readParsed<S extends z.ZodType>(path: string, schema: S, what: string): Promise<z.output<S>> {
  const parsed = await readParsedIfPresent(path, schema, what);
  if (parsed === undefined) throw new ReportInputError(`no ${what} at ${path}`);
  return parsed;
}

/** Which kind of archive folder `dir` is, from the file it holds. */
export async function kindOfFolder(dir: string): Promise<ReportKind> {
  for (const kind of ['sweep', 'campaign', 'experiment'] as const) {
    if ((await readJson(join(dir, KIND_FILES[kind])).catch(() => 'unreadable')) !== undefined) return kind;
  }
  throw new ReportInputError(
    `${dir} holds none of manifest.json, sweep.json, campaign.json: give an experiment's, sweep's or campaign's archive folder (<archiveDir>/<name>/<workflow id>)`,
  );
}

/** The metrics series next to a manifest; its absence (older runs) or damage is a reason, not a failure. */
export async function loadSeries(runDir: string): Promise<SeriesOrReason> {
  const path = metricsSeriesPath(runDir);
  let raw: unknown;
  try {
    raw = await readJson(path);
  } catch (err) {
    return { missing: (err as Error).message };
  }
  if (raw === undefined)
    return {
      missing: `no metrics series at ${path} (runs archived before the train activity kept one have none)`,
    };
  const parsed = MetricsSeriesSchema.safeParse(raw);
  return parsed.success
    ? { series: parsed.data }
    : {
        missing: `${path} is not a valid metrics series: ${parsed.error.issues[0]?.message ?? 'schema mismatch'}`,
      };
}

export async function loadExperiment(dir: string, completeStages?: StageRecord[]): Promise<ExperimentData> {
  const manifest = await readParsed(
    join(dir, KIND_FILES.experiment),
    ReportManifestSchema,
    'experiment manifest',
  );
  return { dir, manifest, series: await loadSeries(dir), ...(completeStages ? { completeStages } : {}) };
}

/** The sweep manifest and the series of its `top` best children (found next to their manifests). */
export async function loadSweep(dir: string, top: number): Promise<SweepData> {
  const manifest = await readParsed(join(dir, KIND_FILES.sweep), SweepManifestSchema, 'sweep manifest');
  const best = manifest.children.filter((c) => c.rank !== undefined).slice(0, top);
  const children = await Promise.all(
    best.map(async (c) => ({
      workflowId: c.workflowId,
      series: c.manifestPath
        ? await loadSeries(dirname(c.manifestPath))
        : { missing: 'the sweep recorded no manifest path for this child' },
    })),
  );
  return { dir, manifest, children };
}

/** The campaign manifest and, per attempt, its manifest and series (each may be missing). */
export async function loadCampaign(dir: string): Promise<CampaignData> {
  const manifest = await readParsed(
    join(dir, KIND_FILES.campaign),
    CampaignManifestSchema,
    'campaign manifest',
  );
  const attempts: AttemptData[] = await Promise.all(
    manifest.attempts.map(async (a) => {
      const runDir = dirname(a.manifestPath);
      let m: ReportManifest | undefined;
      let manifestMissing: string | undefined;
      try {
        m = await readParsed(a.manifestPath, ReportManifestSchema, 'experiment manifest');
      } catch (err) {
        manifestMissing = (err as Error).message;
      }
      return {
        workflowId: a.workflowId,
        ...(m ? { manifest: m } : {}),
        ...(manifestMissing ? { manifestMissing } : {}),
        series: await loadSeries(runDir),
      };
    }),
  );
  return { dir, manifest, attempts };
}
