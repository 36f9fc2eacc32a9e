import { readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MetricsSeriesSchema } from '../../domain/train/metrics-series.js';
import { checkpointPath } from '../../domain/spec/paths.js';
import { type DeletedCheckpoint, type Retain, retentionPlan } from '../../domain/checkpoints/retention.js';
import { readLedger, writeLedger } from '../campaign/campaign-checkpoints.js';
import { checkpointSteps, readTracker } from './checkpoints.js';

/** A checkpoint being deleted is first renamed to this: never a `global_step_N` a resume could pick. */
const DELETING_PREFIX = '.deleting-global_step_';

export interface RetentionInput {
  checkpointDir: string;
  ledgerPath: string;
  retain: Retain;
  /** Never deleted: the resume candidate, checkpoints an attempt's manifest names as validated. */
  protect: { step: number; why: string }[];
  /** metrics-series.json files of the campaign's attempts (for `best`); missing files are skipped. */
  metricsSeriesPaths: string[];
  now: string;
}

export interface RetentionResult {
  kept: { step: number; why: string[] }[];
  deleted: DeletedCheckpoint[];
}

/** Each step's value of `metric` from the attempts' metrics series (the later attempt wins a step). */
export async function metricValues(paths: string[], metric: string): Promise<Record<number, number>> {
  const values: Record<number, number> = {};
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      continue;
    }
    const series = MetricsSeriesSchema.safeParse(JSON.parse(text));
    if (!series.success) continue;
    for (const p of series.data.points) {
      const v = p.values[metric];
      if (v !== undefined) values[p.step] = v;
    }
  }
  return values;
}

/**
 * Between a campaign's attempts (no trainer runs): delete the checkpoints `storage.retain` does not
 * keep. Candidates are only complete ones (at or below the tracker) whose hashes the ledger holds;
 * anything newer or not yet hashed is left alone, and so is every protected step. Each deletion is
 * crash-safe: rename `global_step_N` away (atomic: a resume never sees a half-deleted one), record
 * it in the ledger (path, step, sha256, why), then remove the files. A retry finishes what a killed
 * worker left (renamed folders are recorded if they were not, then removed). Idempotent.
 */
export function createApplyCheckpointRetention() {
  return async function applyCheckpointRetention(input: RetentionInput): Promise<RetentionResult> {
    const { checkpointDir } = input;
    const ledger = await readLedger(input.ledgerPath);
    const deleted: DeletedCheckpoint[] = [...(ledger.deleted ?? [])];
    const recorded = new Set(deleted.map((d) => d.step));
    const entries = new Map(ledger.checkpoints.map((c) => [c.step, c]));

    // A deletion a killed worker left half done: record it (if it was not) and finish it.
    const leftovers = (await readdir(checkpointDir).catch(() => [] as string[]))
      .filter((n) => n.startsWith(DELETING_PREFIX))
      .map((n) => ({ name: n, step: Number(n.slice(DELETING_PREFIX.length)) }));
    for (const l of leftovers) {
      const entry = entries.get(l.step);
      if (!recorded.has(l.step)) {
        deleted.push({
          step: l.step,
          path: checkpointPath(checkpointDir, l.step),
          sha256: entry?.sha256 ?? 'unknown',
          why: 'storage.retain (an interrupted deletion, finished on retry)',
          deletedAt: input.now,
        });
        recorded.add(l.step);
      }
    }
    if (leftovers.length > 0) await writeLedger(input.ledgerPath, { ...ledger, deleted });
    for (const l of leftovers) await rm(join(checkpointDir, l.name), { recursive: true, force: true });

    const tracker = await readTracker(checkpointDir);
    const present = new Set(await checkpointSteps(checkpointDir));
    const candidates = [...entries.values()]
      .filter((c) => present.has(c.step) && tracker !== undefined && c.step <= tracker)
      .map((c) => ({ step: c.step, path: c.path, sha256: c.sha256 }));
    const values = input.retain.best
      ? await metricValues(input.metricsSeriesPaths, input.retain.best.metric)
      : {};
    const plan = retentionPlan(candidates, input.retain, input.protect, values);
    for (const d of plan.delete) {
      const away = join(checkpointDir, `${DELETING_PREFIX}${d.step}`);
      await rename(checkpointPath(checkpointDir, d.step), away);
      deleted.push({ ...d, deletedAt: input.now });
      await writeLedger(input.ledgerPath, { ...ledger, deleted });
      await rm(away, { recursive: true, force: true });
    }
    return { kept: plan.keep, deleted: deleted.filter((d) => plan.delete.some((p) => p.step === d.step)) };
  };
}
