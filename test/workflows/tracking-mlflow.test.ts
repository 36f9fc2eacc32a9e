import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createArchive } from '../../src/activities/archive/archive.js';
import type { Activities } from '../../src/activities/index.js';
import { createArchiveSweep } from '../../src/activities/sweep/sweep-archive.js';
import {
  createTrackMlflowParent,
  createTrackMlflowRun,
  trackingRecordPath,
} from '../../src/activities/tracking/track-mlflow.js';
import { mapFailuresAtBoundary } from '../../src/activities/common/failures.js';
import {
  stepOfCheckpointPath,
  type CampaignInput,
  type CampaignResult,
} from '../../src/domain/campaign/campaign.js';
import type { ExperimentResult } from '../../src/domain/run/experiment-input.js';
import type { MetricsSeries } from '../../src/domain/train/metrics-series.js';
import { metricsSeriesPath, runArchiveDir } from '../../src/domain/spec/paths.js';
import type { SweepResult } from '../../src/domain/sweep/sweep.js';
import { MlflowClient, type MlflowRun } from '../../src/tracking/mlflow/client.js';
import { TAGS } from '../../src/tracking/mlflow/records.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { fakeCampaignWorld } from '../helpers/fake-campaign-world.js';
import { startMlflowServer } from '../helpers/mlflow-server.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let mlflow: Awaited<ReturnType<typeof startMlflowServer>>;
before(async () => {
  [env, mlflow] = await Promise.all([timeSkippingEnv(), startMlflowServer()]);
});
after(async () => {
  await Promise.all([env?.teardown(), mlflow?.stop()]);
});

/** What the train activity leaves next to the manifest (src/domain/train/metrics-series.ts): steps from..to. */
async function writeSeries(runDir: string, from: number, to: number): Promise<void> {
  const points = [];
  for (let step = from; step <= to; step++)
    points.push({
      step,
      // RAGEN's names include `@`, which MLflow refuses: tracked as `pass_at_16`.
      values: {
        'critic/score/mean': step / 100,
        'actor/entropy': 1 - step / 1000,
        'train/CoordSokoban/pass@16': step / 20,
      },
    });
  const series: MetricsSeries = { schemaVersion: 1, maxPoints: 2000, stride: 1, points };
  await mkdir(runDir, { recursive: true });
  await writeFile(metricsSeriesPath(runDir), JSON.stringify(series));
}

/** Stand-in trainer and storage (no Ray), the real archive and the real MLflow activities. */
function activitiesWith(overrides: Partial<Activities>) {
  return fakeActivities({
    archive: createArchive(),
    archiveSweep: createArchiveSweep(),
    hashCheckpoints: async () => ({ hashed: [], checkpoints: [] }),
    trackMlflowRun: mapFailuresAtBoundary({ f: createTrackMlflowRun() }).f,
    trackMlflowParent: mapFailuresAtBoundary({ f: createTrackMlflowParent() }).f,
    ...overrides,
  });
}

async function runWorkflow<R>(
  type: string,
  args: unknown[],
  activities: Activities,
): Promise<{ result?: R; error?: unknown; workflowId: string }> {
  const taskQueue = uniqueId('tq-track');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const workflowId = uniqueId(type);
  return worker.runUntil(async () => {
    try {
      const result = await env.client.workflow.execute(type, { taskQueue, workflowId, args });
      return { result: result as R, workflowId };
    } catch (error) {
      return { error, workflowId };
    }
  });
}

const client = () => new MlflowClient(mlflow.uri);
const tagOf = (run: MlflowRun, key: string) => run.data?.tags?.find((t) => t.key === key)?.value;
const paramOf = (run: MlflowRun, key: string) => run.data?.params?.find((t) => t.key === key)?.value;

async function specWithTracking(experiment: string) {
  const root = await mkdtemp(join(tmpdir(), 'track-'));
  return testSpec({ tracking: { mlflow: { uri: mlflow.uri, experiment } } }, root);
}

describe('MLflow tracking (real mlflow server, time-skipping Temporal, stand-in trainer)', () => {
  it('a campaign is one parent run, each attempt a nested run, metrics on one continuous step axis', async () => {
    const spec = await specWithTracking('campaigns');
    spec.trainer.totalTrainingSteps = 20;
    spec.trainer.saveFreq = 10;
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => attempt === 1 && step === 13,
    });
    const train: Activities['train'] = async (input) => {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const from = input.resume.mode === 'resume_path' ? stepOfCheckpointPath(input.resume.path) + 1 : 1;
      try {
        return await world.overrides.train!(input);
      } finally {
        const to = from === 1 ? 13 : input.spec.trainer.totalTrainingSteps;
        await writeSeries(runArchiveDir(input.spec.storage, input.spec.name, workflowId), from, to);
      }
    };
    const input: CampaignInput = {
      spec,
      budgets: { maxAttempts: 4, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
      provenance: testInput().provenance,
    };
    const { activities } = activitiesWith({ ...world.overrides, train });
    const { result, error, workflowId } = await runWorkflow<CampaignResult>('campaign', [input], activities);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.tracking?.outcome, 'succeeded', JSON.stringify(result?.tracking));

    const c = client();
    const experimentId = await c.experimentId('campaigns');
    const [parent, ...extraParents] = await c.runsByTag(experimentId, TAGS.workflowId, workflowId);
    assert.ok(parent, 'the campaign has a run');
    assert.equal(extraParents.length, 0, 'exactly one parent run');
    assert.equal(tagOf(parent, TAGS.kind), 'campaign');
    assert.equal(tagOf(parent, TAGS.outcome), 'succeeded');
    assert.equal(parent.info.status, 'FINISHED');
    assert.equal(paramOf(parent, 'budgets.maxAttempts'), '4');
    const attempts = await c.runsByTag(experimentId, TAGS.mlflowParent, parent.info.run_id);
    assert.deepEqual(
      attempts.map((a) => tagOf(a, TAGS.workflowId)).sort(),
      [`${workflowId}-a1`, `${workflowId}-a2`],
      'one nested run per attempt',
    );
    const steps = (await c.metricHistory(parent.info.run_id, 'critic/score/mean')).map((m) => m.step);
    assert.deepEqual(
      [...new Set(steps)].sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i + 1),
      "the parent's axis runs 1..20 across both attempts (attempt 2 resumed at step 10)",
    );

    const a2 = attempts.find((a) => tagOf(a, TAGS.workflowId) === `${workflowId}-a2`)!;
    const a1 = attempts.find((a) => tagOf(a, TAGS.workflowId) === `${workflowId}-a1`)!;
    assert.equal(a1.info.status, 'FAILED');
    assert.equal(a2.info.status, 'FINISHED');
    assert.equal(paramOf(a2, 'trainer.totalTrainingSteps'), '20');
    assert.equal(paramOf(a2, 'tracking.mlflow.experiment'), 'campaigns');
    assert.equal(tagOf(a2, 'ragen.rayVersion.declared'), '2.60.0');
    assert.equal(tagOf(a2, TAGS.outcome), 'succeeded');
    assert.ok(tagOf(a2, 'ragen.commits.orchestrator'), 'commits are tags');
    const val = await c.metricHistory(a2.info.run_id, 'validation/success_rate');
    assert.deepEqual(
      val.map((m) => m.value),
      [0.75],
      'validation results are metrics',
    );
    const a2Steps = (await c.metricHistory(a2.info.run_id, 'critic/score/mean')).map((m) => m.step);
    assert.equal(Math.min(...a2Steps), 11);
    const passAt = await c.metricHistory(a2.info.run_id, 'train/CoordSokoban/pass_at_16');
    assert.equal(passAt.length, 10, 'a metric named with @ is tracked under pass_at_16');

    // The manifest is an artifact, byte for byte; tracking.json next to it names the run.
    const manifestPath = join(runArchiveDir(spec.storage, spec.name, `${workflowId}-a2`), 'manifest.json');
    const stored = await c.downloadArtifact(a2.info.artifact_uri!, 'manifest.json');
    assert.equal(stored, await readFile(manifestPath, 'utf8'));
    const record = JSON.parse(await readFile(trackingRecordPath(manifestPath), 'utf8'));
    assert.equal(record.runId, a2.info.run_id);
    assert.equal(record.parentRunId, parent.info.run_id);
    console.log(`[tracking numbers] MLflow REST calls for one attempt (nested, 20 steps): ${record.calls}`);

    // A retried activity finds the same run and adds no metric rows.
    const again = await createTrackMlflowRun()({
      mlflow: spec.tracking!.mlflow!,
      workflowId: `${workflowId}-a2`,
      parentWorkflowId: workflowId,
      manifestPath,
    });
    assert.equal(again.runId, a2.info.run_id);
    assert.equal((await c.runsByTag(experimentId, TAGS.workflowId, `${workflowId}-a2`)).length, 1);
    assert.equal((await c.metricHistory(a2.info.run_id, 'critic/score/mean')).length, a2Steps.length);
  });

  it("a campaign's later attempt retries the tracking that failed for an earlier one", async () => {
    const spec = await specWithTracking('retries');
    spec.trainer.totalTrainingSteps = 20;
    spec.trainer.saveFreq = 10;
    const world = fakeCampaignWorld(() => env.client, {
      failAt: (attempt, step) => attempt === 1 && step === 13,
    });
    const train: Activities['train'] = async (input) => {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const from = input.resume.mode === 'resume_path' ? stepOfCheckpointPath(input.resume.path) + 1 : 1;
      try {
        return await world.overrides.train!(input);
      } finally {
        const to = from === 1 ? 13 : input.spec.trainer.totalTrainingSteps;
        await writeSeries(runArchiveDir(input.spec.storage, input.spec.name, workflowId), from, to);
      }
    };
    // Attempt 1 meets a tracker that is down (the real activity against a port nothing listens on).
    const real = mapFailuresAtBoundary({ f: createTrackMlflowRun() }).f;
    const trackMlflowRun: Activities['trackMlflowRun'] = (input) =>
      real(
        input.workflowId.endsWith('-a1')
          ? { ...input, mlflow: { ...input.mlflow, uri: 'http://127.0.0.1:9' } }
          : input,
      );
    const input: CampaignInput = {
      spec,
      budgets: { maxAttempts: 4, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
      provenance: testInput().provenance,
    };
    const { activities } = activitiesWith({ ...world.overrides, train, trackMlflowRun });
    const { result, error, workflowId } = await runWorkflow<CampaignResult>('campaign', [input], activities);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');

    const manifestOf = (a: string) =>
      join(runArchiveDir(spec.storage, spec.name, `${workflowId}-${a}`), 'manifest.json');
    const a2Record = JSON.parse(await readFile(trackingRecordPath(manifestOf('a2')), 'utf8'));
    assert.deepEqual(a2Record.retried, [{ workflowId: `${workflowId}-a1`, outcome: 'succeeded' }]);
    const a1Record = JSON.parse(await readFile(trackingRecordPath(manifestOf('a1')), 'utf8'));
    assert.equal(a1Record.outcome, 'succeeded', 'the failed record was replaced by the retry');

    const c = client();
    const experimentId = await c.experimentId('retries');
    const [parent] = await c.runsByTag(experimentId, TAGS.workflowId, workflowId);
    const attempts = await c.runsByTag(experimentId, TAGS.mlflowParent, parent!.info.run_id);
    assert.deepEqual(attempts.map((a) => tagOf(a, TAGS.workflowId)).sort(), [
      `${workflowId}-a1`,
      `${workflowId}-a2`,
    ]);
    assert.equal(
      a1Record.runId,
      attempts.find((a) => tagOf(a, TAGS.workflowId) === `${workflowId}-a1`)?.info.run_id,
    );
    const steps = (await c.metricHistory(parent!.info.run_id, 'critic/score/mean')).map((m) => m.step);
    assert.deepEqual(
      [...new Set(steps)].sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i + 1),
      "attempt 1's steps reached the parent's axis through the retry",
    );
  });

  it('a failed try leaves tracking.json saying failed, with the reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'track-failed-'));
    const manifestPath = join(dir, 'manifest.json');
    await writeFile(manifestPath, '{}');
    await assert.rejects(
      createTrackMlflowRun()({
        mlflow: { uri: 'http://127.0.0.1:9', experiment: 'x' },
        workflowId: 'w',
        manifestPath,
      }),
    );
    const record = JSON.parse(await readFile(trackingRecordPath(manifestPath), 'utf8'));
    assert.equal(record.outcome, 'failed');
    assert.ok(record.error.length > 0);
  });

  it('a sweep is a parent run with its children nested', async () => {
    const root = await mkdtemp(join(tmpdir(), 'track-sweep-'));
    const sweep = seedSweep([1, 2], { concurrency: 2 }, root);
    sweep.base.tracking = { mlflow: { uri: mlflow.uri, experiment: 'sweeps' } };
    const { activities } = activitiesWith({});
    const { result, error, workflowId } = await runWorkflow<SweepResult>(
      'sweep',
      [sweepInput(sweep)],
      activities,
    );
    assert.equal(error, undefined, String(error));
    assert.equal(result?.tracking?.outcome, 'succeeded');
    const c = client();
    const experimentId = await c.experimentId('sweeps');
    const [parent] = await c.runsByTag(experimentId, TAGS.workflowId, workflowId);
    assert.equal(tagOf(parent!, TAGS.kind), 'sweep');
    assert.equal(parent!.info.status, 'FINISHED');
    const children = await c.runsByTag(experimentId, TAGS.mlflowParent, parent!.info.run_id);
    assert.equal(children.length, 2);
    assert.equal(
      await c
        .downloadArtifact(parent!.info.artifact_uri!, 'sweep.csv')
        .then((t) => t.split('\n')[0]?.includes('outcome')),
      true,
    );
  });

  it('a tracker that is down changes no outcome: tracking failed, with the reason, in the result', async () => {
    const spec = await specWithTracking('unreachable');
    spec.tracking!.mlflow!.uri = 'http://127.0.0.1:9'; // discard port: nothing listens
    const { activities, calls } = activitiesWith({});
    const { result, error } = await runWorkflow<ExperimentResult>(
      'experiment',
      [testInput(spec)],
      activities,
    );
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.archive.outcome, 'succeeded');
    assert.equal(result?.tracking?.outcome, 'failed');
    assert.match(result?.tracking?.error ?? '', /127\.0\.0\.1:9/);
    assert.equal(calls.filter((c) => c === 'trackMlflowRun').length, 5, 'bounded retries (quick profile: 5)');
  });
});
