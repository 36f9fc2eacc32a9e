import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  RetryState,
} from '@temporalio/common';
import { mapFailuresAtBoundary, permanent, toTemporalFailure } from '../../src/activities/common/failures.js';
import { createActivities } from '../../src/activities/index.js';
import { DomainError, transient } from '../../src/errors/domain-error.js';
import { ErrorTypes, TransientErrorTypes } from '../../src/domain/failures/error-types.js';
import { unwrapFailure } from '../../src/workflows/failure-info.js';
import { testSpec } from '../helpers/specs.js';

describe('domain errors -> Temporal failures (the activity boundary)', () => {
  it('maps a permanent domain error to a non-retryable ApplicationFailure, type and details kept', () => {
    const err = permanent(ErrorTypes.TrainingFailed, 'job FAILED at step 3', { step: 3 });
    assert.ok(err instanceof DomainError);
    const f = toTemporalFailure(err);
    assert.ok(f instanceof ApplicationFailure);
    assert.equal(f.type, ErrorTypes.TrainingFailed);
    assert.equal(f.nonRetryable, true);
    assert.equal(f.message, 'job FAILED at step 3');
    assert.deepEqual(f.details, [{ step: 3 }]);
    assert.equal(f.stack, err.stack, 'the stack says where it was thrown');
  });

  it('maps a transient one to a retryable ApplicationFailure of its type', () => {
    const f = toTemporalFailure(transient(TransientErrorTypes.KubeApiUnavailable, 'API answered 503'));
    assert.ok(f instanceof ApplicationFailure);
    assert.equal(f.type, 'KubeApiUnavailable');
    assert.equal(f.nonRetryable, false);
  });

  it('passes every other error through unchanged', () => {
    for (const err of [
      ApplicationFailure.create({ type: 'X', nonRetryable: true }),
      new CancelledFailure('cancelled'),
      new Error('plain: retried'),
    ]) {
      assert.equal(toTemporalFailure(err), err);
    }
  });

  it('wraps every activity createActivities builds: a backend that is not configured fails non-retryable', async () => {
    const activities = createActivities({
      backends: {},
      reportProgress: async () => undefined,
      rayHead: () => assert.fail('no Ray head'),
      workflowStatus: async () => undefined,
      pollIntervalMs: 10,
    });
    const spec = testSpec();
    const owner = { experiment: spec.name, workflowId: 'w', runId: 'r', attempt: 0 };
    await assert.rejects(activities.submitCluster({ spec, name: 'c', owner }), (err: unknown) => {
      assert.ok(err instanceof ApplicationFailure, String(err));
      assert.equal(err.type, ErrorTypes.InvalidSpec);
      assert.equal(err.nonRetryable, true);
      assert.match(err.message, /backend 'local' is not configured on this worker/);
      return true;
    });
  });

  it('keeps names and results of what it wraps', async () => {
    const wrapped = mapFailuresAtBoundary({ double: async (n: number) => n * 2 });
    assert.deepEqual(Object.keys(wrapped), ['double']);
    assert.equal(await wrapped.double(21), 42);
  });
});

describe('unwrapFailure (the one place that looks through Temporal wrappers)', () => {
  const app = ApplicationFailure.create({
    type: ErrorTypes.ValidationFailed,
    message: 'validation job FAILED',
    details: [{ outcome: 'failed' }],
  });

  it('reads type, message and details through an activity failure', () => {
    const err = new ActivityFailure(
      'activity failed',
      'validate',
      '7',
      RetryState.NON_RETRYABLE_FAILURE,
      'worker',
      app,
    );
    assert.deepEqual(unwrapFailure(err), {
      type: ErrorTypes.ValidationFailed,
      message: 'validation job FAILED',
      details: [{ outcome: 'failed' }],
      cancelled: false,
    });
  });

  it('reads them through a child workflow failure', () => {
    const err = new ChildWorkflowFailure(
      'default',
      { workflowId: 'c-a1', runId: 'r' },
      'experiment',
      RetryState.NON_RETRYABLE_FAILURE,
      app,
    );
    assert.equal(unwrapFailure(err).type, ErrorTypes.ValidationFailed);
    assert.deepEqual(unwrapFailure(err).details, [{ outcome: 'failed' }]);
  });

  it('says cancelled for a cancellation, wrapped or not, and reads a plain error', () => {
    assert.equal(unwrapFailure(new CancelledFailure('cancelled')).cancelled, true);
    assert.equal(
      unwrapFailure(
        new ActivityFailure('x', 'train', '3', RetryState.CANCEL_REQUESTED, 'w', new CancelledFailure('c')),
      ).cancelled,
      true,
    );
    assert.deepEqual(unwrapFailure(new Error('boom')), {
      type: undefined,
      message: 'boom',
      details: [],
      cancelled: false,
    });
  });
});
