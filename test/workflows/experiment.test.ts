import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../src/activities/index.js';
import { registryUnavailable } from '../../src/registry/errors.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { ExperimentInput, ExperimentResult } from '../../src/domain/run/experiment-input.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { progressSignal } from '../../src/workflows/shared-definitions.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { waitUntil } from '../helpers/wait.js';
import { locateRun } from '../../src/cli/report-locate.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { manifestPath } from '../../src/domain/spec/paths.js';
import { buildReportModel } from '../../src/report/write-report.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/** Run the experiment workflow against fake activities; returns the result or the failure. */
async function runWith(
  overrides: Partial<Activities>,
  input: ExperimentInput = testInput(),
  during?: (id: string) => Promise<void>,
) {
  const { activities, calls } = fakeActivities(overrides);
  const taskQueue = uniqueId('tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  const workflowId = uniqueId('wf');
  const outcome = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId,
      args: [input],
    });
    if (during) await during(workflowId);
    try {
      return { result: await handle.result(), error: undefined };
    } catch (error) {
      return { result: undefined, error };
    }
  });
  return { ...outcome, calls, workflowId };
}

const permanent = (type: string) => async () => {
  throw ApplicationFailure.create({ type, message: `stand-in ${type}`, nonRetryable: true });
};

function failureResult(error: unknown): { type?: string; result?: ExperimentResult } {
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  const cause = error.cause as ApplicationFailure;
  return { type: cause.type ?? undefined, result: cause.details?.[0] as ExperimentResult | undefined };
}

/** Teardown and hashing (both at once, since no trainer is left writing), then the archive. */
function endsTornDownHashedArchived(calls: string[]): void {
  assert.deepEqual(calls.slice(-3, -1).sort(), ['hashCheckpoints', 'teardown']);
  assert.equal(calls.at(-1), 'archive');
}

describe('experiment workflow (time-skipping server, fake activities)', () => {
  it('runs the eight stages in order and records each outcome', async () => {
    const { result, calls } = await runWith({});
    assert.deepEqual(calls.slice(0, -3), [
      'preflight',
      'reserveBudget',
      'verify',
      'submitCluster',
      'awaitJoin',
      'allReduceCheck',
      'train',
      'validate',
    ]);
    endsTornDownHashedArchived(calls);
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.training.outcome, 'succeeded');
    assert.equal(result?.validation.successRate, 0.75);
    assert.equal(result?.teardown.outcome, 'succeeded');
    assert.deepEqual(
      result?.stages.map((s) => s.stage),
      ['preflight', 'verify', 'submit', 'join', 'train', 'validate', 'teardown', 'archive'],
    );
  });

  it('creates nothing and tears nothing down when preflight fails', async () => {
    const { error, calls } = await runWith({ preflight: permanent(ErrorTypes.StorageNotWritable) });
    assert.deepEqual(calls, ['preflight']);
    assert.equal(failureResult(error).type, ErrorTypes.StorageNotWritable);
  });

  for (const [stage, activity, type] of [
    ['submit', 'submitCluster', ErrorTypes.InvalidSpec],
    ['join', 'awaitJoin', ErrorTypes.RayVersionMismatch],
    ['train', 'train', ErrorTypes.TrainingFailed],
    ['validate', 'validate', ErrorTypes.ValidationFailed],
  ] as const) {
    it(`tears the cluster down after a failure in ${stage}`, async () => {
      const { error, calls } = await runWith({ [activity]: permanent(type) });
      // A failed trainer's job may still be writing: hashing waits for teardown then.
      if (activity === 'train') assert.deepEqual(calls.slice(-3), ['teardown', 'hashCheckpoints', 'archive']);
      else endsTornDownHashedArchived(calls);
      assert.equal(calls.filter((c) => c === activity).length, 1, 'a non-retryable error is not retried');
      const { type: failed, result } = failureResult(error);
      assert.equal(failed, type);
      assert.equal(result?.teardown.outcome, 'succeeded');
      assert.ok(calls.includes('archive'), 'what exists is archived');
    });
  }

  it('records training, validation and teardown outcomes separately', async () => {
    const { error } = await runWith({ validate: permanent(ErrorTypes.ValidationFailed) });
    const { result } = failureResult(error);
    assert.equal(result?.training.outcome, 'succeeded');
    assert.equal(result?.validation.outcome, 'failed');
    assert.equal(result?.teardown.outcome, 'succeeded');
    assert.equal(result?.outcome, 'failed');
  });

  it('retries a transient error and does not retry a permanent one', async () => {
    let attempts = 0;
    const { result, calls } = await runWith({
      verify: async () => {
        attempts++;
        if (attempts < 3) throw new Error('registry 503 (stand-in)');
        return { image: { verified: false, note: 'fake' }, plannedRayVersion: '2.60.0' };
      },
    });
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(calls.filter((c) => c === 'verify').length, 3);
  });

  it('retries an unavailable registry in verify, then fails clearly; an unknown image is not retried; no cluster either way', async () => {
    const down = await runWith({
      verify: async () => {
        throw registryUnavailable(
          'registry 127.0.0.1:1 unreachable at http://127.0.0.1:1/v2/ragen/manifests/sha256:0 (stand-in)',
        );
      },
    });
    assert.equal(down.calls.filter((c) => c === 'verify').length, 5, 'the quick profile tries 5 times');
    assert.equal(failureResult(down.error).type, 'RegistryUnavailable');
    assert.match(
      String((down.error as WorkflowFailedError).cause?.message),
      /registry 127\.0\.0\.1:1 unreachable/,
    );
    assert.ok(!down.calls.includes('submitCluster'));
    const missing = await runWith({ verify: permanent(ErrorTypes.ImageNotFound) });
    assert.equal(missing.calls.filter((c) => c === 'verify').length, 1);
    assert.equal(failureResult(missing.error).type, ErrorTypes.ImageNotFound);
    assert.ok(!missing.calls.includes('submitCluster'));
  });

  it('resubmits the whole cluster after a missed join deadline, then fails with JoinDeadlineExceeded', async () => {
    const spec = testSpec();
    spec.join.maxResubmits = 1;
    // The test server does not skip time while an activity runs, so the deadline is short for real.
    spec.deadlines.joinSeconds = 2;
    // The join says why it waits (as the real one signals it), and the failure repeats it.
    const why =
      "Pod c-worker-0 Pending (0/4 nodes are available: 1 node(s) didn't match Pod's node affinity)";
    const waitingJoin = async () => {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      await env.client.workflow
        .getHandle(workflowId)
        .signal(progressSignal, { joinedWorkers: 1, waiting: why });
      return heartbeatUntilCancelled();
    };
    const { error, calls } = await runWith({ awaitJoin: waitingJoin }, testInput(spec));
    assert.deepEqual(
      calls.filter((c) => ['submitCluster', 'awaitJoin', 'teardown'].includes(c)),
      ['submitCluster', 'awaitJoin', 'teardown', 'submitCluster', 'awaitJoin', 'teardown'],
    );
    const { type, result } = failureResult(error);
    assert.equal(type, ErrorTypes.JoinDeadlineExceeded);
    assert.match(
      String((error as WorkflowFailedError).cause?.message),
      new RegExp(
        `workers did not join within 2 s \\(deadlines.joinSeconds\\): 1 joined, 0 GPUs registered; waiting: Pod c-worker-0 Pending`,
      ),
    );
    assert.equal(result?.submits, 2);
    assert.ok(!calls.includes('train'), 'no training step before every worker joined');
  });

  it('resubmits after a failed all-reduce and continues when the new cluster passes', async () => {
    let checks = 0;
    const { result, calls } = await runWith({
      allReduceCheck: async () => {
        checks++;
        if (checks === 1)
          throw ApplicationFailure.create({
            type: ErrorTypes.AllReduceFailed,
            message: 'sum mismatch (stand-in)',
            nonRetryable: true,
          });
        return { ok: true, path: 'fake', world_size: 2, bus_bandwidth_gbps: 1 };
      },
    });
    assert.equal(result?.outcome, 'succeeded');
    assert.equal(result?.submits, 2);
    assert.equal(calls.filter((c) => c === 'teardown').length, 2);
  });

  it('a probe the image cannot load fails once: one cluster, no resubmit, torn down', async () => {
    const { error, calls } = await runWith({ allReduceCheck: permanent(ErrorTypes.ProbeUnavailable) });
    const { type, result } = failureResult(error);
    assert.equal(type, ErrorTypes.ProbeUnavailable);
    assert.equal(result?.submits, 1);
    assert.equal(calls.filter((c) => c === 'submitCluster').length, 1);
    assert.equal(calls.filter((c) => c === 'allReduceCheck').length, 1);
    endsTornDownHashedArchived(calls);
  });

  it('an unmet image contract fails once, torn down, not resubmitted; its findings reach the manifest', async () => {
    const failures = [
      {
        item: 'module:vllm',
        node: 'worker 10.0.0.2 (abc)',
        found: 'ModuleNotFoundError',
        fix: 'install vllm',
      },
    ];
    const environment = {
      ok: false,
      nodes: [{ node: 'worker 10.0.0.2 (abc)' }],
      failures,
      probePackage: 'gcs://_ray_pkg_x.zip',
    };
    let draft: unknown;
    const { error, calls } = await runWith({
      allReduceCheck: async () => {
        throw ApplicationFailure.create({
          type: ErrorTypes.ImageContractUnmet,
          message: 'stand-in ImageContractUnmet',
          nonRetryable: true,
          details: [{ failures, environment }],
        });
      },
      archive: async (input) => {
        draft = input.draft;
        return { manifestPath: '/tmp/stand-in/manifest.json', sha256: '0'.repeat(64), checkpoints: 0 };
      },
    });
    const { type, result } = failureResult(error);
    assert.equal(type, ErrorTypes.ImageContractUnmet);
    assert.equal(result?.submits, 1);
    assert.equal(calls.filter((c) => c === 'allReduceCheck').length, 1);
    endsTornDownHashedArchived(calls);
    const recorded = draft as { environment: { probe?: unknown }; preflight: { allReduce?: unknown } };
    assert.deepEqual(recorded.environment.probe, environment);
    assert.equal(recorded.preflight.allReduce, undefined);
  });

  it('fails on the no-progress watchdog and still tears down', async () => {
    const { error, calls } = await runWith({ train: permanent(ErrorTypes.NoProgress) });
    assert.equal(failureResult(error).type, ErrorTypes.NoProgress);
    assert.deepEqual(calls.slice(-3), ['teardown', 'hashCheckpoints', 'archive']);
  });

  it('fails on the whole-run deadline and tears down', async () => {
    const spec = testSpec();
    spec.deadlines.runSeconds = 4; // real seconds: no time skipping while an activity runs
    const { error, calls } = await runWith({ train: heartbeatUntilCancelled }, testInput(spec));
    const { type, result } = failureResult(error);
    assert.equal(type, ErrorTypes.RunDeadlineExceeded);
    assert.equal(result?.training.outcome, 'cancelled');
    assert.deepEqual(calls.slice(-3), ['teardown', 'hashCheckpoints', 'archive']);
  });

  for (const [stage, activity] of [
    ['join', 'awaitJoin'],
    ['train', 'train'],
    ['validate', 'validate'],
  ] as const) {
    it(`tears down and archives when cancelled during ${stage}`, async () => {
      const { error, calls } = await runWith(
        { [activity]: heartbeatUntilCancelled },
        testInput(),
        async (workflowId) => {
          const handle = env.client.workflow.getHandle(workflowId);
          // Lockstep: the stand-in of that stage heartbeats until cancelled; cancel once it runs.
          await waitUntil(`stage ${stage}`, async () => (await handle.query<string>('stage')) === stage);
          await handle.cancel();
        },
      );
      assert.ok(error instanceof WorkflowFailedError);
      assert.equal(error.cause?.name, 'CancelledFailure');
      // A cancelled trainer's job may still be writing its last checkpoint: hashing waits for teardown.
      if (stage === 'train') assert.deepEqual(calls.slice(-3), ['teardown', 'hashCheckpoints', 'archive']);
      else endsTornDownHashedArchived(calls);
    });
  }
});

describe('report: a workflow found by its id (time-skipping server, stand-in activities)', () => {
  it('reads the archive folder from the input and every stage through teardown from the result', async () => {
    const root = await mkdtemp(join(tmpdir(), 'report-locate-'));
    try {
      const spec = testSpec({}, root);
      // A stand-in archive that writes the manifest where the real one does.
      const archive: Activities['archive'] = async ({ draft, archiveDir }) => {
        const path = manifestPath(archiveDir, draft.experiment, draft.temporal.workflowId);
        const manifest = ManifestSchema.parse({
          schemaVersion: 1,
          ...draft,
          checkpoints: [],
          writtenAt: new Date(0).toISOString(),
        });
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, JSON.stringify(manifest));
        return { manifestPath: path, sha256: 'f'.repeat(64), checkpoints: 0 };
      };
      const { result, workflowId } = await runWith({ archive }, testInput(spec));
      assert.equal(result?.outcome, 'succeeded');
      const located = await locateRun(env.client, workflowId);
      assert.equal(located.kind, 'experiment');
      assert.equal(located.dir, join(root, 'archive', spec.name, workflowId));
      assert.equal(located.completeStages?.at(-1)?.stage, 'archive');
      const model = await buildReportModel(located, { keys: [], top: 5 });
      const timeline = model.sections.find((s) => s.title === 'Stage timeline')!;
      assert.ok(timeline.notes.includes('Stages from the workflow’s result (through teardown).'));
      assert.deepEqual(timeline.gantt?.bars.at(-1)?.label, 'archive');
      assert.match(model.sections[0]!.notes[0]!, /no metrics series at/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
