import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { createTrain } from '../../src/activities/train.js';
import { createAwaitJoin } from '../../src/activities/join.js';
import type { ActivityDeps } from '../../src/activities/deps.js';
import type { ClusterHandle, ClusterStatus } from '../../src/spec/cluster.js';
import type { TrainHeartbeat } from '../../src/spec/progress.js';
import { FakeRayHead, fakeBackend, readyCluster } from '../helpers/fake-ray-head.js';
import { testSpec } from '../helpers/specs.js';

const handle: ClusterHandle = { backend: 'local', name: 'c-a0', dashboardUrl: 'http://stand-in', owner: { experiment: 'e', workflowId: 'w', runId: 'r', attempt: 0 } };

function deps(head: FakeRayHead, status: () => ClusterStatus = () => readyCluster(2, 2)): ActivityDeps {
  return { backends: { local: fakeBackend(status) }, rayHead: () => head, reportProgress: async () => undefined, workflowStatus: async () => undefined, pollIntervalMs: 20 };
}

describe('train activity (MockActivityEnvironment, stand-in Ray head)', () => {
  it('heartbeats {step, lastCheckpointStep} and succeeds when all steps and the last checkpoint exist', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    const beats: TrainHeartbeat[] = [];
    env.on('heartbeat', (d: TrainHeartbeat) => beats.push({ ...d }));
    const spec = testSpec();
    const train = createTrain(deps(head));
    const running = env.run(train, { spec, handle, checkpointDir: dir, resume: { mode: 'disable' as const } });
    await new Promise((r) => setTimeout(r, 100));
    head.logs = 'step:1 - critic/score/mean:1\nstep:10 - critic/score/mean:2\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '10');
    await new Promise((r) => setTimeout(r, 100));
    head.logs += 'step:20 - critic/score/mean:3\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
    head.status = 'SUCCEEDED';
    const result = (await running) as { finalStep: number; lastCheckpointStep: number };
    assert.equal(result.finalStep, 20);
    assert.equal(result.lastCheckpointStep, 20);
    assert.ok(beats.some((b) => b.step === 10 && b.lastCheckpointStep === 10), JSON.stringify(beats));
    assert.equal(head.submitted.length, 1);
  });

  it('resumes from heartbeat details after a retry: same job, watchdog clock kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.submitted.push('c-a0-train-0'); // the first attempt submitted it
    const previous: TrainHeartbeat = { step: 5, lastCheckpointStep: 0, submissionId: 'c-a0-train-0', lastProgressAt: Date.now() - 3_600_000 };
    const env = new MockActivityEnvironment({ heartbeatDetails: previous });
    const spec = testSpec();
    spec.deadlines.noProgressSeconds = 60;
    await assert.rejects(env.run(createTrain(deps(head)), { spec, handle, checkpointDir: dir, resume: { mode: 'disable' as const } }), (err: Error & { type?: string }) => {
      assert.equal(err.type, 'NoProgress');
      return true;
    });
    assert.deepEqual(head.stopped, ['c-a0-train-0'], 'the stuck job is stopped');
    assert.equal(head.submitted.filter((s) => s === 'c-a0-train-0').length, 2, 'the retry found the existing job (idempotent submit)');
  });

  it('reports a lost worker node as ClusterLost and stops the job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    await assert.rejects(env.run(createTrain(deps(head, () => readyCluster(1, 1))), { spec: testSpec(), handle, checkpointDir: dir, resume: { mode: 'disable' as const } }), /worker node .* was lost/);
    assert.equal(head.stopped.length, 1);
  });

  it('fails an early stop (exit 0 before total_training_steps) as TrainingIncomplete', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.status = 'SUCCEEDED';
    head.logs = 'step:7 - early_stopped/low_validation_success:1.0\n';
    const env = new MockActivityEnvironment();
    await assert.rejects(env.run(createTrain(deps(head)), { spec: testSpec(), handle, checkpointDir: dir, resume: { mode: 'disable' as const } }), /exited 0 at step 7\/20.*early stop/);
  });

  it('stops the job when the activity is cancelled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    const running = env.run(createTrain(deps(head)), { spec: testSpec(), handle, checkpointDir: dir, resume: { mode: 'disable' as const } });
    await new Promise((r) => setTimeout(r, 100));
    env.cancel();
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    assert.deepEqual(head.stopped, ['c-a0-train-0']);
  });
});

describe('join activity (MockActivityEnvironment, stand-in backend)', () => {
  it('heartbeats {nodesAlive, gpusRegistered} until every worker joined with its GPUs', async () => {
    let polls = 0;
    const status = () => (++polls < 3 ? readyCluster(1, 1) : readyCluster(2, 2));
    const env = new MockActivityEnvironment();
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const result: { workersAlive: number } = await env.run(createAwaitJoin(deps(new FakeRayHead(), status)), { spec: testSpec(), handle });
    assert.equal(result.workersAlive, 2);
    assert.deepEqual(beats[0], { nodesAlive: 0, gpusRegistered: 1 });
    assert.deepEqual(beats.at(-1), { nodesAlive: 0, gpusRegistered: 2 });
  });

  it("refuses a head whose Ray version differs from rayVersion", async () => {
    const env = new MockActivityEnvironment();
    const status = () => ({ ...readyCluster(2, 2), headRayVersion: '2.49.0' });
    await assert.rejects(env.run(createAwaitJoin(deps(new FakeRayHead(), status)), { spec: testSpec(), handle }), /runs Ray 2\.49\.0, the spec declares rayVersion 2\.60\.0/);
  });
});
