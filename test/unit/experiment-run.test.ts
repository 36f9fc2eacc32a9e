import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import {
  buildManifestDraft,
  experimentResult,
  newExperimentRun,
} from '../../src/workflows/experiment-run.js';
import { testInput, testSpec } from '../helpers/specs.js';

const ids = { workflowId: 'exp-1', runId: 'run-1', namespace: 'default', taskQueue: 'q' };
const archiveStage = { stage: 'archive' as const, attempt: 1, startedAt: '2026-01-01T00:10:00.000Z' };

/** A run as the workflow leaves it after training and validation succeeded on a resubmitted cluster. */
function finishedRun() {
  const run = newExperimentRun(
    {
      ...testInput(testSpec({}, '/data')),
      resumeFrom: '/data/checkpoints/sokoban-test/exp-1/global_step_10',
    },
    ids,
  );
  const owner = { experiment: 'sokoban-test', workflowId: ids.workflowId, runId: ids.runId, attempt: 1 };
  Object.assign(run, {
    handle: { backend: 'local', name: 'sokoban-test-1234abcd-a1', dashboardUrl: 'http://127.0.0.1:1', owner },
    preflightChecks: [{ name: 'capacity', ok: true, detail: '3 nodes' }],
    verified: { image: { verified: false, note: 'local' }, plannedRayVersion: '2.60.0' },
    joined: { nodes: [], workersAlive: 2, gpusRegistered: 2, headRayVersion: '2.60.0' },
    allReduce: { ok: true, path: 'cpu', world_size: 2 },
    validationResult: {
      checkpoint: 'x',
      step: 20,
      episodes: 32,
      seed: 123,
      success_rate: 0.75,
      mean_reward: 5,
      mean_actions: 4,
      records: [{ seed: 1, success: true, reward: 5, actions: 4 }],
    },
    finalStep: 20,
    submits: 2,
    training: { outcome: 'succeeded' },
    validation: { outcome: 'succeeded' },
    outcome: 'succeeded',
  });
  run.status.attempt = 1;
  run.stages.push(
    {
      stage: 'preflight',
      attempt: 0,
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:00:01.000Z',
      outcome: 'succeeded',
    },
    archiveStage,
  );
  return run;
}

describe('experiment run record (pure, no server)', () => {
  it('derives the checkpoint dir, the run dir and the resume mode from the input', () => {
    const run = newExperimentRun(testInput(testSpec({}, '/data')), ids);
    assert.equal(run.checkpointDir, '/data/checkpoints/sokoban-test/exp-1');
    assert.equal(run.runDir, '/data/archive/sokoban-test/exp-1');
    assert.deepEqual(run.resume, { mode: 'disable' });
    const resumed = newExperimentRun(
      { ...testInput(), resumeFrom: '/c/global_step_30', checkpointDir: '/c' },
      ids,
    );
    assert.equal(resumed.checkpointDir, '/c', "a campaign's shared dir wins");
    assert.equal(resumed.status.lastCheckpointStep, 30);
  });

  it('buildManifestDraft gives a draft the manifest schema accepts, with what the run knows', () => {
    const run = finishedRun();
    const draft = buildManifestDraft(run);
    const manifest = ManifestSchema.parse({
      schemaVersion: 1,
      ...draft,
      checkpoints: [],
      writtenAt: archiveStage.startedAt,
    });
    assert.deepEqual(manifest.temporal, ids);
    assert.equal(manifest.resumedFrom, '/data/checkpoints/sokoban-test/exp-1/global_step_10');
    assert.ok(
      manifest.entrypoint.includes(
        'trainer.resume_from_path=/data/checkpoints/sokoban-test/exp-1/global_step_10',
      ),
    );
    assert.ok(manifest.entrypoint.includes('trainer.default_local_dir=/data/checkpoints/sokoban-test/exp-1'));
    assert.deepEqual(manifest.rayVersion, {
      declared: '2.60.0',
      planned: '2.60.0',
      observedOnHead: '2.60.0',
    });
    assert.equal(manifest.cluster.submits, 2);
    assert.equal(manifest.cluster.handle?.name, 'sokoban-test-1234abcd-a1');
    assert.deepEqual(manifest.training, { outcome: 'succeeded', finalStep: 20, totalTrainingSteps: 20 });
    assert.equal(manifest.validation.resultsPath, '/data/archive/sokoban-test/exp-1/validation.json');
    assert.equal(manifest.validation.result?.success_rate, 0.75);
    assert.equal(
      (manifest.validation.result as { records?: unknown }).records,
      undefined,
      'per-episode records stay in validation.json',
    );
    assert.deepEqual(manifest.stages.at(-1), archiveStage, "the archive's own stage record is last");
    assert.equal(manifest.outcome, 'succeeded');
  });

  it('records what did not happen: no verify, no validation', () => {
    const run = newExperimentRun(testInput(), ids);
    run.outcome = 'failed';
    run.stages.push(archiveStage);
    const draft = buildManifestDraft(run);
    assert.deepEqual(draft.image, { verified: false, note: 'verify did not run' });
    assert.equal(draft.validation.resultsPath, undefined);
    assert.deepEqual(draft.cluster.nodes, []);
    assert.equal(draft.outcome, 'failed');
  });

  it('copies the stage records, so the draft does not change when the archive stage ends', () => {
    const run = finishedRun();
    const draft = buildManifestDraft(run);
    run.stages.at(-1)!.outcome = 'succeeded';
    assert.equal(draft.stages.at(-1)?.outcome, undefined);
  });

  it('experimentResult reports each outcome separately', () => {
    const result = experimentResult(finishedRun());
    assert.equal(result.outcome, 'succeeded');
    assert.equal(result.training.finalStep, 20);
    assert.equal(result.validation.successRate, 0.75);
    assert.equal(result.submits, 2);
    assert.equal(result.checkpointDir, '/data/checkpoints/sokoban-test/exp-1');
  });
});
