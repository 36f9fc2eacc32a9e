import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AttemptRecord, CampaignInput } from '../../src/domain/campaign/campaign.js';
import { CampaignManifestSchema } from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import {
  attemptRecord,
  budgetFailure,
  buildCampaignManifestDraft,
  finishedTraining,
  newCampaignRun,
  progressOf,
} from '../../src/workflows/campaign-run.js';
import { testInput, testSpec } from '../helpers/specs.js';

const ids = { workflowId: 'camp-1', runId: 'run-1', namespace: 'default', taskQueue: 'q' };
const input = (maxAttempts = 3): CampaignInput => ({
  spec: testSpec({}, '/data'),
  budgets: { maxAttempts, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
  provenance: testInput().provenance,
});

function attempt(
  n: number,
  outcome: AttemptRecord['outcome'],
  type: string,
  finalStep?: number,
): AttemptRecord {
  return {
    attempt: n,
    workflowId: `camp-1-a${n}`,
    startedFromStep: 0,
    totalTrainingSteps: 20,
    outcome,
    ended: { type, message: `m${n}` },
    finalStep,
    checkpointStepAfter: 0,
    manifestPath: `/m${n}`,
    gpuSeconds: 10,
    startedAt: 't',
    endedAt: 't',
  };
}

describe('campaign run record (pure, no server)', () => {
  it('shares one checkpoint dir and keeps the ledger next to the campaign manifest', () => {
    const run = newCampaignRun(input(), ids);
    assert.equal(run.checkpointDir, '/data/checkpoints/sokoban-test/camp-1');
    assert.equal(run.ledgerPath, '/data/archive/sokoban-test/camp-1/checkpoints.json');
    assert.equal(run.gpus, 2);
  });

  it('decides when no attempt may start: attempts used (pauses do not count), stalled, fatal', () => {
    const run = newCampaignRun(input(2), ids);
    assert.equal(budgetFailure(run), undefined);
    run.state.attempts.push(attempt(1, 'paused', 'paused'), attempt(2, 'failed', ErrorTypes.TrainingFailed));
    assert.equal(budgetFailure(run), undefined, 'a pause is not a used attempt');
    run.state.attempts.push(attempt(3, 'failed', ErrorTypes.TrainingFailed));
    assert.equal(budgetFailure(run)?.type, ErrorTypes.CampaignAttemptsExhausted);
    const stalled = newCampaignRun(input(), ids);
    stalled.state.attemptsWithoutNewCheckpoint = 2;
    assert.match(budgetFailure(stalled)?.reason ?? '', /2 attempts in a row ended without a new checkpoint/);
    const fatal = newCampaignRun(input(), ids);
    fatal.state.attempts.push(attempt(1, 'failed', ErrorTypes.StorageNotWritable));
    assert.equal(budgetFailure(fatal)?.type, ErrorTypes.StorageNotWritable);
  });

  it('is done when the last attempt trained to the current total (an extend makes it go on)', () => {
    const run = newCampaignRun(input(), ids);
    run.state.attempts.push(attempt(1, 'succeeded', 'succeeded', 20));
    assert.equal(finishedTraining(run), true);
    run.state.totalTrainingSteps = 30;
    assert.equal(finishedTraining(run), false);
  });

  it('counts GPU seconds of the running attempt in its progress', () => {
    const run = newCampaignRun(input(), ids);
    run.state.attempts.push(attempt(1, 'failed', ErrorTypes.TrainingFailed));
    Object.assign(run.live, { phase: 'running', attemptStartedAt: '2026-01-01T00:00:00.000Z' });
    const p = progressOf(run, '2026-01-01T00:00:05.000Z');
    assert.equal(p.attempt, 2);
    assert.equal(p.gpuSeconds, 10 + 2 * 5);
  });

  it('records an attempt that failed before reporting stages with its wall time, and links its manifest path', () => {
    const run = newCampaignRun(input(), ids);
    const record = attemptRecord(
      run,
      {
        n: 1,
        workflowId: 'camp-1-a1',
        startedFromStep: 0,
        totalTrainingSteps: 20,
        startedAt: '2026-01-01T00:00:00.000Z',
        endedAt: '2026-01-01T00:00:10.000Z',
        checkpointStepAfter: 0,
      },
      { outcome: 'failed', ended: { type: ErrorTypes.InvalidSpec, message: 'bad' } },
    );
    assert.equal(record.gpuSeconds, 20);
    assert.equal(record.manifestPath, '/data/archive/sokoban-test/camp-1-a1/manifest.json');
  });

  it('builds a manifest draft the campaign manifest schema accepts', () => {
    const run = newCampaignRun(input(), ids);
    run.state.attempts.push(attempt(1, 'succeeded', 'succeeded', 20));
    run.outcome = 'succeeded';
    const { ledgerPath, ...draft } = buildCampaignManifestDraft(run, '2026-01-01T01:00:00.000Z');
    assert.equal(ledgerPath, run.ledgerPath);
    const manifest = CampaignManifestSchema.parse({
      schemaVersion: 1,
      ...draft,
      checkpoints: [],
      untrusted: [],
    });
    assert.equal(manifest.campaign, 'camp-1');
    assert.equal(manifest.gpuSeconds, 10);
  });
});
