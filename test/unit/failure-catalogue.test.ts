/**
 * The failure catalogue, entry by entry, through the code that decides: the activity boundary (is
 * it retried), the campaign's pure rules (how an attempt that ended with it counts), and the docs'
 * failure table rendered from it. The experiment's resubmit is checked on the time-skipping
 * server (test/workflows/failure-catalogue.test.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { toTemporalFailure } from '../../src/activities/common/failures.js';
import type { AttemptRecord, CampaignInput } from '../../src/domain/campaign/campaign.js';
import { FAILURE_CATALOGUE, type FailureEntry } from '../../src/domain/failures/catalogue.js';
import {
  type ErrorType,
  ErrorTypes,
  type TransientErrorType,
  TransientErrorTypes,
} from '../../src/domain/failures/error-types.js';
import { permanent, transient } from '../../src/errors/domain-error.js';
import {
  budgetFailure,
  failedAttemptOutcome,
  newCampaignRun,
  stallCountAfter,
} from '../../src/workflows/campaign-run.js';
import { FAILURE_TABLE_DOC, renderFailureTable, tableIn, withTable } from '../docs/failure-table.js';
import { testInput, testSpec } from '../helpers/specs.js';

const entries = Object.entries(FAILURE_CATALOGUE) as [string, FailureEntry][];

describe('the failure catalogue', () => {
  it('names every error type once, and the names ErrorTypes and TransientErrorTypes hold are its own', () => {
    const names = [...Object.keys(ErrorTypes), ...Object.keys(TransientErrorTypes)];
    assert.deepEqual([...names].sort(), entries.map(([name]) => name).sort());
    assert.equal(new Set(names).size, names.length, 'no name in both');
    for (const [key, value] of Object.entries({ ...ErrorTypes, ...TransientErrorTypes }))
      assert.equal(value, key, 'a name is its own value');
    for (const [name, e] of entries) {
      assert.ok(e.means.length > 0 && e.fix.length > 0, `${name} says what happened and what to do`);
    }
  });

  for (const [name, e] of entries) {
    it(`${name}: retried ${e.retry}, as the activity boundary marks it`, () => {
      const nonRetryableOf = (err: unknown) => {
        const f = toTemporalFailure(err);
        assert.ok(f instanceof ApplicationFailure);
        assert.equal(f.type, name);
        return f.nonRetryable;
      };
      if (e.retry !== 'transient')
        assert.equal(nonRetryableOf(permanent(name as ErrorType, 'm')), true, 'thrown permanent');
      if (e.retry === 'transient')
        assert.equal(nonRetryableOf(transient(name as TransientErrorType, 'm')), false, 'thrown transient');
      assert.equal(name in ErrorTypes, e.retry !== 'transient', 'permanent() takes it');
      assert.equal(name in TransientErrorTypes, e.retry === 'transient', 'transient() takes it');
    });
  }
});

describe('how a campaign counts an attempt that failed with each type (the campaign rules)', () => {
  const ids = { workflowId: 'camp-1', runId: 'run-1', namespace: 'default', taskQueue: 'q' };
  const input: CampaignInput = {
    spec: testSpec({}, '/data'),
    budgets: { maxAttempts: 2, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
    provenance: testInput().provenance,
  };
  const ended = (n: number, outcome: AttemptRecord['outcome'], type: string): AttemptRecord => ({
    attempt: n,
    workflowId: `camp-1-a${n}`,
    startedFromStep: 0,
    totalTrainingSteps: 20,
    outcome,
    ended: { type, message: `m${n}` },
    checkpointStepAfter: 0,
    manifestPath: `/m${n}`,
    gpuSeconds: 10,
    startedAt: 't',
    endedAt: 't',
  });

  /** A campaign whose previous attempt failed plainly, then one attempt that failed with `type` and left no checkpoint. */
  function afterFailureOf(type: string) {
    const run = newCampaignRun(input, ids);
    run.state.attempts.push(ended(1, 'failed', ErrorTypes.TrainingFailed));
    run.state.attemptsWithoutNewCheckpoint = 0;
    let asked = 0;
    const outcome = failedAttemptOutcome({ type, cancelled: false }, () => ++asked > 0);
    run.state.attempts.push(ended(2, outcome, type));
    run.state.attemptsWithoutNewCheckpoint = stallCountAfter(0, outcome, false);
    return { run, outcome, asked };
  }

  for (const [name, e] of entries) {
    it(`${name}: ${e.campaign}`, () => {
      const { run, outcome, asked } = afterFailureOf(name);
      const stop = budgetFailure(run);
      switch (e.campaign) {
        case 'fatal':
          // Two attempts of maxAttempts 2 are used too: the budget speaks first, the campaign ends either way.
          assert.equal(outcome, 'failed');
          assert.ok(stop !== undefined, 'no further attempt');
          assert.equal(asked, 0, 'no preemption patch asked');
          assert.equal(budgetFailure(only(name, 'failed'))?.type, name, 'ends the campaign with its type');
          break;
        case 'preempted':
          assert.equal(outcome, 'preempted');
          assert.equal(asked, 1, 'the preemption patch is asked once');
          assert.equal(stop, undefined, 'counted toward neither maxAttempts nor the stall count');
          assert.equal(run.state.attemptsWithoutNewCheckpoint, 0);
          break;
        case 'attempt':
        case 'none':
          assert.equal(outcome, 'failed');
          assert.equal(asked, 0, 'no preemption patch asked');
          assert.equal(stop?.type, ErrorTypes.CampaignAttemptsExhausted, 'counted toward maxAttempts');
          assert.equal(run.state.attemptsWithoutNewCheckpoint, 1, 'counted toward the stall count');
          assert.equal(budgetFailure(only(name, 'failed')), undefined, 'another attempt may start');
          break;
      }
    });
  }

  /** A campaign of one attempt that ended with `type`. */
  function only(type: string, outcome: AttemptRecord['outcome']) {
    const run = newCampaignRun(input, ids);
    run.state.attempts.push(ended(1, outcome, type));
    return run;
  }

  it('a cancelled attempt is cancelled whatever its type, and asks no patch', () => {
    let asked = 0;
    const outcome = failedAttemptOutcome(
      { type: ErrorTypes.ClusterPreempted, cancelled: true },
      () => ++asked > 0,
    );
    assert.equal(outcome, 'cancelled');
    assert.equal(asked, 0);
  });

  it('before the preemption patch, a preemption counts as a failure; a type the catalogue does not name too', () => {
    assert.equal(
      failedAttemptOutcome({ type: ErrorTypes.ClusterPreempted, cancelled: false }, () => false),
      'failed',
    );
    assert.equal(
      failedAttemptOutcome({ type: 'ExperimentFailed', cancelled: false }, () => true),
      'failed',
    );
    assert.equal(
      failedAttemptOutcome({ cancelled: false }, () => true),
      'failed',
    );
    assert.equal(budgetFailure(only('ExperimentFailed', 'failed')), undefined);
  });

  it('the stall count: a failed attempt without a new checkpoint adds one, a new checkpoint or another ending restarts it', () => {
    assert.equal(stallCountAfter(1, 'failed', false), 2);
    assert.equal(stallCountAfter(1, 'failed', true), 0);
    for (const outcome of ['preempted', 'paused', 'succeeded', 'cancelled', 'earlyStopped'] as const)
      assert.equal(stallCountAfter(1, outcome, false), 0, outcome);
  });
});

describe("the docs' failure table", () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const doc = readFileSync(join(root, FAILURE_TABLE_DOC), 'utf8');

  it(`in ${FAILURE_TABLE_DOC} is the table rendered from the catalogue (else: npm run docs:failures)`, () => {
    assert.equal(tableIn(doc), renderFailureTable());
  });

  it('has one row per entry, each with its retry, resubmit and campaign columns', () => {
    const rows = renderFailureTable().split('\n').slice(2);
    assert.equal(rows.length, entries.length);
    const resubmitted = rows.filter((r) => r.split('|')[3]?.trim() === 'yes').map((r) => r.split('`')[1]);
    assert.deepEqual(
      resubmitted,
      entries.filter(([, e]) => e.resubmit).map(([name]) => name),
    );
  });

  it('is rewritten in place between its markers, the rest of the doc kept', () => {
    const stale = withTable(doc, '| stale |');
    assert.equal(tableIn(stale), '| stale |');
    assert.equal(withTable(stale, renderFailureTable()), doc);
  });
});
