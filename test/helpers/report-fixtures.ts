/**
 * Archive folders for report tests, every file built through its zod schema (parsed, so the
 * fixtures stay valid as the schemas change): an experiment with a 1,000-step series, a sweep of
 * six children, a campaign of three attempts (a failure, then two resumes).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSweepSpec } from '../../src/cli/spec-files/load-sweep.js';
import { type AttemptRecord, CampaignManifestSchema } from '../../src/domain/campaign/campaign.js';
import { type Manifest, ManifestSchema } from '../../src/domain/run/manifest.js';
import { type MetricsSeries, MetricsSeriesSchema } from '../../src/domain/train/metrics-series.js';
import {
  manifestPath,
  metricsSeriesPath,
  runArchiveDir,
  sweepManifestPaths,
} from '../../src/domain/spec/paths.js';
import type { StageRecord } from '../../src/domain/run/results.js';
import { expandSweep } from '../../src/domain/sweep/sweep-expand.js';
import { rankChildren } from '../../src/domain/sweep/sweep-results.js';
import { type ChildOutcome, SweepManifestSchema } from '../../src/domain/sweep/sweep.js';
import { buildManifestDraft, newExperimentRun } from '../../src/workflows/experiment-run.js';
import { testInput, testSpec, validSpecYaml } from './specs.js';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

/** A trainer-like series: reward and success rising with noise, step time, per `steps` steps from `from`. */
export function testSeries(
  steps: number,
  opts: { from?: number; seed?: number; lift?: number } = {},
): MetricsSeries {
  const from = opts.from ?? 0;
  let x = opts.seed ?? 1;
  const noise = () => {
    x = (x * 48271) % 2147483647;
    return x / 2147483647 - 0.5;
  };
  const lift = opts.lift ?? 1;
  const points = Array.from({ length: steps }, (_, i) => {
    const step = from + i + 1;
    const progress = Math.min(1, (step / 1000) * lift);
    return {
      step,
      values: {
        'critic/score/mean': -1 + 11 * progress + noise(),
        'train/CoordSokoban/success': Math.max(0, Math.min(1, progress + noise() * 0.2)),
        'timing_s/step': 2 + noise() * 0.4,
        'actor/td_error': 0.5 / (1 + step / 100) + noise() * 0.01,
      },
    };
  });
  return MetricsSeriesSchema.parse({ schemaVersion: 1, maxPoints: 2000, stride: 1, points });
}

/** Stage records of a run that trained `trainSeconds`; `complete` adds the archive's end and teardown. */
export function testStages(trainSeconds: number, complete: boolean): StageRecord[] {
  let t = 0;
  const rec = (stage: StageRecord['stage'], seconds: number | undefined, attempt = 0): StageRecord => {
    const r: StageRecord = { stage, attempt, startedAt: iso(t) };
    if (seconds !== undefined) {
      t += seconds;
      Object.assign(r, { endedAt: iso(t), outcome: 'succeeded' });
    }
    return r;
  };
  const stages = [rec('preflight', 2), rec('verify', 1), rec('submit', 5), rec('join', 40)];
  t += 12; // workflow task + activity dispatch between join and train: idle GPUs
  stages.push(rec('train', trainSeconds));
  t += 3;
  stages.push(rec('validate', 30));
  t += 1;
  stages.push(rec('archive', complete ? 25 : undefined));
  if (complete) stages.push(rec('teardown', 8));
  return stages;
}

/** Stage records moved `seconds` later. */
export function shiftStages(stages: StageRecord[], seconds: number): StageRecord[] {
  const move = (t: string) => iso((Date.parse(t) - T0) / 1000 + seconds);
  return stages.map((st) => ({
    ...st,
    startedAt: move(st.startedAt),
    ...(st.endedAt ? { endedAt: move(st.endedAt) } : {}),
  }));
}

/** An experiment manifest through the workflow's own draft builder, parsed by ManifestSchema. */
export function testManifest(
  workflowId: string,
  root: string,
  opts: { steps?: number; resumeFrom?: string; success?: number; shift?: number } = {},
): Manifest {
  const steps = opts.steps ?? 1000;
  const spec = { ...testSpec({}, root) };
  spec.trainer = { ...spec.trainer, totalTrainingSteps: steps, saveFreq: 100 };
  const run = newExperimentRun(
    { ...testInput(spec), ...(opts.resumeFrom ? { resumeFrom: opts.resumeFrom } : {}) },
    {
      workflowId,
      runId: `${workflowId}-run`,
      namespace: 'default',
      taskQueue: 'report-test',
    },
  );
  Object.assign(run, {
    preflightChecks: [{ name: 'storage', ok: true, detail: 'writable' }],
    verified: { image: { verified: false, note: 'local backend: no image' }, plannedRayVersion: '2.60.0' },
    joined: { nodes: [], workersAlive: 2, gpusRegistered: 2, headRayVersion: '2.60.0' },
    allReduce: { ok: true, path: 'cpu', world_size: 2, latency_ms: 3.2 },
    validationResult: {
      runner: 'payload',
      env_tag: 'CoordSokoban',
      checkpoint: `${run.checkpointDir}/global_step_${steps}`,
      step: steps,
      episodes: 32,
      seed: 5000,
      seeds: { first: 5000, last: 5031 },
      success_rate: opts.success ?? 0.8125,
      pass_at_k: { '1': 0.8125 },
      mean_reward: 7.4,
    },
    finalStep: steps,
    submits: 1,
    training: { outcome: 'succeeded' },
    validation: { outcome: 'succeeded' },
    outcome: 'succeeded',
  });
  const shift = opts.shift ?? 0;
  run.stages.push(...shiftStages(testStages(steps * 2, false), shift));
  const trainEnd = T0 + (shift + 2 + 1 + 5 + 40 + 12 + steps * 2) * 1000;
  const checkpoints = [100, steps].map((step) => ({
    step,
    path: `${run.checkpointDir}/global_step_${step}`,
    sha256: 'a'.repeat(64),
    files: [
      {
        path: 'actor/model.pt',
        bytes: 1024,
        sha256: 'b'.repeat(64),
        mtimeMs: step === steps ? trainEnd - 1500 : T0,
      },
    ],
  }));
  return ManifestSchema.parse({
    schemaVersion: 1,
    ...buildManifestDraft(run),
    checkpoints,
    writtenAt: iso(shift + 2 + 1 + 5 + 40 + 12 + steps * 2 + 34),
  });
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 1));
}

/** Writes an experiment's archive folder (manifest and, unless `series: false`, a series); returns the folder. */
export async function writeExperiment(
  root: string,
  workflowId: string,
  opts: {
    steps?: number;
    series?: MetricsSeries | false;
    success?: number;
    resumeFrom?: string;
    shift?: number;
  } = {},
): Promise<string> {
  const manifest = testManifest(workflowId, root, opts);
  const dir = runArchiveDir(manifest.resolvedSpec.storage, manifest.experiment, workflowId);
  await writeJson(
    manifestPath(manifest.resolvedSpec.storage.archiveDir, manifest.experiment, workflowId),
    manifest,
  );
  const series = opts.series ?? testSeries(opts.steps ?? 1000);
  if (series) await writeJson(metricsSeriesPath(dir), series);
  return dir;
}

/** A sweep of six children (lr x seed grid), one failed; the best five have series. */
export async function writeSweep(root: string, sweepId = 'sweep-report-1'): Promise<string> {
  const indent = (t: string) =>
    t
      .trim()
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n');
  const spec = await parseSweepSpec(
    `name: lr-sweep\nbase:\n${indent(validSpecYaml(root))}\nparameters:\n  grid:\n    algorithm.lr: [0.01, 0.03, 0.1]\n    trainer.seedTrain: [1, 2]\n`,
  );
  const sets = expandSweep(spec);
  const children: ChildOutcome[] = [];
  for (const [index, params] of sets.entries()) {
    const workflowId = `${sweepId}-${index}`;
    if (index === 4) {
      children.push({
        index,
        workflowId,
        outcome: 'failed',
        error: 'TrainingFailed: <script>alert(1)</script>',
      });
      continue;
    }
    const success = Math.min(0.95, 0.3 + 5 * (params['algorithm.lr'] as number) + 0.05 * index);
    const dir = await writeExperiment(root, workflowId, {
      steps: 200,
      success,
      series: testSeries(200, { seed: index + 3, lift: 2 + index }),
    });
    children.push({
      index,
      workflowId,
      outcome: 'succeeded',
      successRate: success,
      manifestPath: join(dir, 'manifest.json'),
    });
  }
  const manifest = SweepManifestSchema.parse({
    schemaVersion: 1,
    sweep: spec.name,
    temporal: { workflowId: sweepId, runId: 'r', namespace: 'default', taskQueue: 'report-test' },
    provenance: testInput().provenance,
    spec,
    objective: spec.objective,
    counts: { total: sets.length, succeeded: 5, failed: 1, cancelled: 0, notStarted: 0 },
    stoppedByFailureBudget: false,
    outcome: 'succeeded',
    children: rankChildren(children, (i) => sets[i] ?? {}, spec.objective),
    writtenAt: iso(5000),
  });
  const { manifestPath: path } = sweepManifestPaths(spec.base.storage.archiveDir, spec.name, sweepId);
  await writeJson(path, manifest);
  return join(path, '..');
}

/** A campaign: attempt 1 fails after step 340 (checkpoint 300), attempt 2 is paused at 600, attempt 3 finishes 1000. */
export async function writeCampaign(root: string, campaignId = 'campaign-report-1'): Promise<string> {
  const spec = testSpec({}, root);
  const plan = [
    {
      from: 0,
      last: 340,
      after: 300,
      outcome: 'failed' as const,
      ended: { type: 'TrainingFailed', message: 'exit 1 after step 340' },
    },
    {
      from: 300,
      last: 600,
      after: 600,
      outcome: 'paused' as const,
      ended: { type: 'paused', message: 'paused after checkpoint 600' },
    },
    {
      from: 600,
      last: 1000,
      after: 1000,
      outcome: 'succeeded' as const,
      ended: { type: 'succeeded', message: 'done' },
    },
  ];
  const attempts: AttemptRecord[] = [];
  for (const [i, p] of plan.entries()) {
    const workflowId = `${campaignId}-a${i + 1}`;
    const series = testSeries(p.last - p.from, { from: p.from, seed: 11 + i });
    const dir = await writeExperiment(root, workflowId, {
      steps: p.last - p.from,
      shift: i * 3000,
      series: i === 1 ? false : series, // the second attempt ran before series existed: the report says so
      ...(p.from
        ? { resumeFrom: `${root}/checkpoints/${spec.name}/${campaignId}/global_step_${p.from}` }
        : {}),
    });
    attempts.push({
      attempt: i + 1,
      workflowId,
      ...(p.from ? { startedFrom: `global_step_${p.from}` } : {}),
      startedFromStep: p.from,
      ...(i > 0 ? { previousEnded: plan[i - 1]!.ended } : {}),
      totalTrainingSteps: 1000,
      outcome: p.outcome,
      ended: p.ended,
      finalStep: p.last,
      checkpointStepAfter: p.after,
      manifestPath: join(dir, 'manifest.json'),
      gpuSeconds: (p.last - p.from) * 4,
      stages: shiftStages(testStages((p.last - p.from) * 2, true), i * 3000),
      startedAt: iso(i * 3000),
      endedAt: iso(i * 3000 + 2500),
    });
  }
  const manifest = CampaignManifestSchema.parse({
    schemaVersion: 1,
    campaign: campaignId,
    experiment: spec.name,
    temporal: { workflowId: campaignId, runId: 'r', namespace: 'default', taskQueue: 'report-test' },
    budgets: { maxAttempts: 5, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
    provenance: testInput().provenance,
    checkpointDir: `${root}/checkpoints/${spec.name}/${campaignId}`,
    totalTrainingSteps: 1000,
    outcome: 'succeeded',
    attempts,
    checkpoints: [300, 600, 1000].map((step) => ({ step, sha256: 'c'.repeat(64) })),
    untrusted: [],
    gpuSeconds: attempts.reduce((n, a) => n + a.gpuSeconds, 0),
    continuedAsNew: 0,
    writtenAt: iso(9000),
  });
  const dir = runArchiveDir(spec.storage, spec.name, campaignId);
  await writeJson(join(dir, 'campaign.json'), manifest);
  return dir;
}
