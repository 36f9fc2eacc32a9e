import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities/index.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { ExperimentInput, ExperimentResult } from '../../src/domain/run/experiment-input.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { activityClosed } from '../helpers/history-attempts.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testInput } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

async function runWith(overrides: Partial<Activities>, spec: ExperimentSpec) {
  const { activities, calls } = fakeActivities(overrides);
  const taskQueue = uniqueId('tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const input: ExperimentInput = testInput(spec);
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId: uniqueId('wf'),
      args: [input],
    });
    try {
      return { result: await handle.result(), error: undefined };
    } catch (error) {
      return { result: undefined, error };
    }
  });
  return { ...outcome, calls };
}

function failure(error: unknown): { type?: string; message: string; result?: ExperimentResult } {
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  const cause = error.cause as ApplicationFailure;
  return {
    type: cause.type ?? undefined,
    message: cause.message,
    result: cause.details?.[0] as ExperimentResult | undefined,
  };
}

const permanent = (type: string) => async () => {
  throw ApplicationFailure.create({ type, message: `stand-in ${type}`, nonRetryable: true });
};

/**
 * The storage proof failing with `type` once the history holds the all-reduce's result: the workflow
 * then never asks to cancel an activity the server has closed. The real server ignores that race;
 * the time-skipping server hangs on it (ACTIVITY_UNKNOWN, temporalio/sdk-typescript#1058).
 */
const failsAfterAllReduce = (type: string) => async (): Promise<never> => {
  const ctx = Context.current();
  const workflowId = ctx.info.workflowExecution?.workflowId;
  assert.ok(workflowId, 'the proof runs in a workflow');
  const handle = env.client.workflow.getHandle(workflowId);
  while (!(await activityClosed(handle, 'allReduceCheck'))) await ctx.sleep(100);
  return permanent(type)();
};

const queued = (admissionSeconds: number): ExperimentSpec => {
  const spec = kuberaySpec('/mnt/shared');
  spec.kuberay = { ...spec.kuberay!, queueName: 'team-gpus', admissionSeconds };
  return spec;
};

const joinStages = [
  'submitCluster',
  'awaitAdmission',
  'awaitJoin',
  'proveSharedStorage',
  'allReduceCheck',
  'train',
  'teardown',
];

describe('experiment workflow on kuberay: admission, shared storage, pod failures (time-skipping server, fake activities)', () => {
  it('waits for Kueue admission before join, proves shared storage alongside the all-reduce, before training', async () => {
    const { result, calls } = await runWith({}, queued(3600));
    assert.equal(result?.outcome, 'succeeded');
    // The admission wait is a stage of its own, `queued`, between submit and join.
    const names = result!.stages.map((s) => s.stage);
    assert.deepEqual(names.slice(names.indexOf('submit'), names.indexOf('join') + 1), [
      'submit',
      'queued',
      'join',
    ]);
    const inJoin = calls.filter((c) => joinStages.includes(c));
    assert.deepEqual(inJoin.slice(0, 3), joinStages.slice(0, 3));
    assert.deepEqual(inJoin.slice(3, 5).sort(), ['allReduceCheck', 'proveSharedStorage']);
    assert.deepEqual(inJoin.slice(5), joinStages.slice(5));
  });

  it('storage that is not shared wins over the all-reduce check it explains, and stops it', async () => {
    const running = await runWith(
      { proveSharedStorage: permanent(ErrorTypes.StorageNotShared), allReduceCheck: heartbeatUntilCancelled },
      kuberaySpec('/mnt/shared'),
    );
    assert.equal(failure(running.error).type, ErrorTypes.StorageNotShared);
    // Both failing, the all-reduce first (the probe could not read its own results): the storage
    // error, and no resubmit.
    const both = await runWith(
      {
        proveSharedStorage: failsAfterAllReduce(ErrorTypes.StorageNotShared),
        allReduceCheck: permanent(ErrorTypes.AllReduceFailed),
      },
      kuberaySpec('/mnt/shared'),
    );
    const f = failure(both.error);
    assert.equal(f.type, ErrorTypes.StorageNotShared);
    assert.equal(f.result?.submits, 1);
    assert.ok(!both.calls.includes('train'));
  });

  it('without a queue there is no admission wait; the local backend has no storage proof', async () => {
    const kuberay = await runWith({}, kuberaySpec('/mnt/shared'));
    assert.ok(!kuberay.calls.includes('awaitAdmission'));
    assert.ok(kuberay.calls.includes('proveSharedStorage'));
    const local = await runWith({}, testInput().spec);
    assert.ok(!local.calls.includes('proveSharedStorage'));
  });

  it('a cluster never admitted fails with AdmissionDeadlineExceeded under its own deadline, without resubmitting, and is torn down', async () => {
    // The test server does not skip time while an activity runs, so the deadline is short for real.
    const { error, calls } = await runWith({ awaitAdmission: heartbeatUntilCancelled }, queued(2));
    const f = failure(error);
    assert.equal(f.type, ErrorTypes.AdmissionDeadlineExceeded);
    assert.match(
      f.message,
      /not admitted from Kueue queue team-gpus within 2 s \(kuberay\.admissionSeconds\)/,
    );
    assert.deepEqual(
      calls.filter((c) => joinStages.includes(c)),
      ['submitCluster', 'awaitAdmission', 'teardown'],
    );
  });

  for (const [stage, type] of [
    ['awaitJoin', ErrorTypes.ImagePullFailed],
    ['awaitJoin', ErrorTypes.PodCrashLooping],
    ['awaitJoin', ErrorTypes.ReplicaFailure],
    ['proveSharedStorage', ErrorTypes.StorageNotShared],
  ] as const) {
    it(`${type} in ${stage} fails the run at once (a new cluster would fail the same way), before any training step`, async () => {
      // The proof fails beside an all-reduce that passes: after it, so that the race above cannot hang the test.
      const fails = stage === 'proveSharedStorage' ? failsAfterAllReduce(type) : permanent(type);
      const { error, calls } = await runWith({ [stage]: fails }, kuberaySpec('/mnt/shared'));
      const f = failure(error);
      assert.equal(f.type, type);
      assert.equal(f.result?.submits, 1);
      assert.ok(!calls.includes('train'));
      // Teardown comes before the archive (the GPUs are freed first), and always happens.
      assert.ok(calls.includes('teardown'));
    });
  }
});
