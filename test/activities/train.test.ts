import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { createTrain, type TrainResult } from '../../src/activities/train/train.js';
import { createAwaitJoin } from '../../src/activities/join/join.js';
import type { ActivityDeps } from '../../src/activities/common/deps.js';
import type { ClusterHandle, ClusterStatus } from '../../src/domain/cluster/cluster.js';
import type { TrainHeartbeat } from '../../src/domain/run/progress.js';
import { FakeRayHead, fakeBackend, readyCluster } from '../helpers/fake-ray-head.js';
import { testSpec } from '../helpers/specs.js';
import { waitUntil } from '../helpers/wait.js';
import { MetricsSeriesSchema, MetricsSummarySchema } from '../../src/domain/train/metrics-series.js';
import {
  metricsSeriesPath,
  metricsSummaryPath,
  runArchiveDir,
  trainLogPath,
} from '../../src/domain/spec/paths.js';

const handle: ClusterHandle = {
  backend: 'local',
  name: 'c-a0',
  dashboardUrl: 'http://stand-in',
  owner: { experiment: 'e', workflowId: 'w', runId: 'r', attempt: 0 },
};

function deps(head: FakeRayHead, status: () => ClusterStatus = () => readyCluster(2, 2)): ActivityDeps {
  return {
    backends: { local: fakeBackend(status) },
    rayHead: () => head,
    reportProgress: async () => undefined,
    workflowStatus: async () => undefined,
    pollIntervalMs: 20,
  };
}

describe('train activity (MockActivityEnvironment, stand-in Ray head)', () => {
  it('heartbeats {step, lastCheckpointStep} and succeeds when all steps and the last checkpoint exist', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    const beats: TrainHeartbeat[] = [];
    env.on('heartbeat', (d: TrainHeartbeat) => beats.push({ ...d }));
    const spec = testSpec({}, dir);
    const train = createTrain(deps(head));
    const running = env.run(train, {
      spec,
      handle,
      checkpointDir: dir,
      resume: { mode: 'disable' as const },
    });
    head.logs = 'step:1 - critic/score/mean:1\nstep:10 - critic/score/mean:2\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '10');
    // Lockstep: step 20 appears only once a poll has seen step 10 and its checkpoint.
    await waitUntil('a heartbeat at step 10', () =>
      beats.some((b) => b.step === 10 && b.lastCheckpointStep === 10),
    );
    head.logs += 'step:20 - critic/score/mean:3\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
    head.status = 'SUCCEEDED';
    const result = (await running) as { finalStep: number; lastCheckpointStep: number };
    assert.equal(result.finalStep, 20);
    assert.equal(result.lastCheckpointStep, 20);
    assert.ok(
      beats.some((b) => b.step === 10 && b.lastCheckpointStep === 10),
      JSON.stringify(beats),
    );
    assert.equal(head.submitted.length, 1);
  });

  it('resumes from heartbeat details after a retry: same job, watchdog clock kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.submitted.push('c-a0-train-0'); // the first attempt submitted it
    const previous: TrainHeartbeat = {
      step: 5,
      lastCheckpointStep: 0,
      submissionId: 'c-a0-train-0',
      lastProgressAt: Date.now() - 3_600_000,
    };
    const env = new MockActivityEnvironment({ heartbeatDetails: previous });
    const spec = testSpec({}, dir);
    spec.deadlines.noProgressSeconds = 60;
    await assert.rejects(
      env.run(createTrain(deps(head)), {
        spec,
        handle,
        checkpointDir: dir,
        resume: { mode: 'disable' as const },
      }),
      (err: Error & { type?: string }) => {
        assert.equal(err.type, 'NoProgress');
        return true;
      },
    );
    assert.deepEqual(head.stopped, ['c-a0-train-0'], 'the stuck job is stopped');
    assert.equal(
      head.submitted.filter((s) => s === 'c-a0-train-0').length,
      2,
      'the retry found the existing job (idempotent submit)',
    );
  });

  it('reports a lost worker node as ClusterLost and stops the job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    await assert.rejects(
      env.run(createTrain(deps(head, () => readyCluster(1, 1))), {
        spec: testSpec({}, dir),
        handle,
        checkpointDir: dir,
        resume: { mode: 'disable' as const },
      }),
      /worker node .* was lost/,
    );
    assert.equal(head.stopped.length, 1);
  });

  it("returns RAGEN's early stop (exit 0, early_stopped/* metric) with its reason", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.status = 'SUCCEEDED';
    head.exitCode = 0;
    head.logs =
      '(TaskRunner pid=1) step:7 - val-env/CoordSokoban/success:0.0 - early_stopped/low_validation_success:1.0\n';
    const env = new MockActivityEnvironment();
    const result = await env.run(createTrain(deps(head)), {
      spec: testSpec({}, dir),
      handle,
      checkpointDir: dir,
      resume: { mode: 'disable' as const },
    });
    assert.deepEqual((result as TrainResult).earlyStopped, { step: 7, reasons: ['low_validation_success'] });
  });

  it('fails exit 0 before total_training_steps without an early-stop metric as TrainingIncomplete', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.status = 'SUCCEEDED';
    head.logs = 'step:7 - critic/score/mean:1\n';
    const env = new MockActivityEnvironment();
    await assert.rejects(
      env.run(createTrain(deps(head)), {
        spec: testSpec({}, dir),
        handle,
        checkpointDir: dir,
        resume: { mode: 'disable' as const },
      }),
      (err: Error & { type?: string }) => {
        assert.equal(err.type, 'TrainingIncomplete');
        assert.match(err.message, /exited 0 at step 7\/20/);
        return true;
      },
    );
  });

  for (const [exitCode, logs, type] of [
    [2, "config error: unknown override key 'trainer.no_such'", 'TrainingConfigInvalid'],
    [
      1,
      "hydra.errors.ConfigCompositionException: Could not override 'trainer.no_such'.",
      'TrainingConfigInvalid',
    ],
    [
      3,
      'resource error: Total available GPUs 1 is less than total desired GPUs 2',
      'TrainingResourceShortfall',
    ],
    [4, 'checkpoint error: world size changed', 'CheckpointUnusable'],
    [1, 'RuntimeError: CUDA error: an illegal memory access', 'TrainingFailed'],
    [1, "OSError: [Errno 28] No space left on device: '/ckpt/global_step_20/actor'", 'CheckpointDiskFull'],
  ] as const) {
    it(`types a FAILED job with exit ${exitCode} and "${logs.slice(0, 40)}…" as ${type}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'train-'));
      const head = new FakeRayHead();
      head.status = 'FAILED';
      head.exitCode = exitCode;
      head.logs = `step:3 - critic/score/mean:1\n${logs}\n`;
      const env = new MockActivityEnvironment();
      await assert.rejects(
        env.run(createTrain(deps(head)), {
          spec: testSpec({}, dir),
          handle,
          checkpointDir: dir,
          resume: { mode: 'disable' as const },
        }),
        (err: Error & { type?: string }) => {
          assert.equal(err.type, type);
          if (type === 'CheckpointDiskFull') assert.match(err.message, /\d+\.\d\d GB free on /);
          return true;
        },
      );
    });
  }

  it('gives the first step deadlines.firstStepSeconds, then noProgressSeconds between steps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    head.submitted.push('c-a0-train-0');
    const spec = testSpec({}, dir);
    spec.deadlines.noProgressSeconds = 60;
    spec.deadlines.firstStepSeconds = 3600;
    // 10 minutes after submission, resumed at step 10: only its validation line (step:10) so far.
    const waiting: TrainHeartbeat = {
      step: 10,
      lastCheckpointStep: 10,
      submissionId: 'c-a0-train-0',
      lastProgressAt: Date.now() - 600_000,
      submittedAt: Date.now() - 600_000,
    };
    head.logs = 'step:10 - val-env/CoordSokoban/success:0.5\n';
    const env = new MockActivityEnvironment({ heartbeatDetails: waiting });
    const resume = { mode: 'resume_path' as const, path: `${dir}/global_step_10` };
    let polls = 0;
    env.on('heartbeat', () => polls++);
    const running = env.run(createTrain(deps(head)), { spec, handle, checkpointDir: dir, resume });
    // Lockstep: a poll judged the log (its heartbeat), or the activity ended (a wrong stop).
    await Promise.race([waitUntil('a poll', () => polls > 0), running.catch(() => undefined)]);
    assert.deepEqual(head.stopped, [], 'still within firstStepSeconds: not stopped');
    env.cancel();
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    // The first step came and then nothing for longer than noProgressSeconds.
    // Each scenario its own archive (the log copy and its parse state live there).
    const stuckSpec = testSpec({}, await mkdtemp(join(tmpdir(), 'train-')));
    stuckSpec.deadlines = { ...spec.deadlines };
    const stuck = new FakeRayHead();
    stuck.submitted.push('c-a0-train-0');
    stuck.logs = 'step:10 - x:1\nstep:11 - x:1\n';
    const after: TrainHeartbeat = { ...waiting, step: 11 };
    await assert.rejects(
      new MockActivityEnvironment({ heartbeatDetails: after }).run(createTrain(deps(stuck)), {
        spec: stuckSpec,
        handle,
        checkpointDir: dir,
        resume,
      }),
      /noProgressSeconds=60/,
    );
    // No first step within firstStepSeconds.
    const neverSpec = testSpec({}, await mkdtemp(join(tmpdir(), 'train-')));
    neverSpec.deadlines = { ...spec.deadlines, firstStepSeconds: 300 };
    const never = new FakeRayHead();
    never.submitted.push('c-a0-train-0');
    await assert.rejects(
      new MockActivityEnvironment({ heartbeatDetails: waiting }).run(createTrain(deps(never)), {
        spec: neverSpec,
        handle,
        checkpointDir: dir,
        resume,
      }),
      /firstStepSeconds=300/,
    );
  });

  it('reads only new log bytes, copies the log next to the manifest, and a retry continues the copy and the metrics', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const spec = testSpec({}, dir);
    const runDir = runArchiveDir(spec.storage, spec.name, 'w'); // MockActivityEnvironment's workflow id
    const copy = trainLogPath(runDir, handle.name);
    const head = new FakeRayHead();
    const input = { spec, handle, checkpointDir: dir, resume: { mode: 'disable' as const } };
    const first = new MockActivityEnvironment({ workflowExecution: { workflowId: 'w', runId: 'r' } });
    let polls = 0;
    first.on('heartbeat', () => polls++);
    // Lockstep: every byte so far reached the follower, then two heartbeats (so one whole poll read it).
    const polledAll = async () => {
      const bytes = Buffer.byteLength(head.logs);
      await waitUntil('the log followed', () => head.followedBytes >= bytes);
      const after = polls;
      await waitUntil('a poll of it', () => polls >= after + 2);
    };
    const running = first.run(createTrain(deps(head)), input);
    for (let step = 1; step <= 12; step++) {
      head.logs += `(TaskRunner pid=1) step:${step} - critic/score/mean:${step % 5} - actor/loss:${1 / step}\nnoise ${step}\n`;
      if (step === 10) await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '10');
      if (step % 4 === 0) await polledAll();
    }
    head.logs += 'a last line without newline';
    await polledAll();
    first.cancel(); // the worker goes away mid-run
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    assert.ok(head.followedBytes <= Buffer.byteLength(head.logs), 'no byte sent twice while following');
    const copied = await readFile(copy, 'utf8');
    assert.ok(
      copied.length > 0 && head.logs.startsWith(copied) && copied.endsWith('\n'),
      'whole lines copied, a partial one waits',
    );

    // The retry: the same job, the log grown further; the copy continues without repeating a byte.
    head.logs += ' ends here\nstep:20 - critic/score/mean:4 - actor/loss:0.01\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
    head.status = 'SUCCEEDED';
    const retry = new MockActivityEnvironment({
      workflowExecution: { workflowId: 'w', runId: 'r' },
      heartbeatDetails: {
        step: 12,
        lastCheckpointStep: 10,
        submissionId: 'c-a0-train-0',
        lastProgressAt: Date.now(),
      },
    });
    const result = (await retry.run(createTrain(deps(head)), input)) as TrainResult;
    assert.equal(result.finalStep, 20);
    assert.equal(await readFile(copy, 'utf8'), head.logs, 'the copy is the log, nothing twice');
    const series = MetricsSeriesSchema.parse(JSON.parse(await readFile(metricsSeriesPath(runDir), 'utf8')));
    assert.deepEqual(
      series.points.map((p) => p.step),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20],
      'steps before the retry come from the saved state and the copy, not from the log again',
    );
    const summary = MetricsSummarySchema.parse(
      JSON.parse(await readFile(metricsSummaryPath(runDir), 'utf8')),
    );
    assert.deepEqual(summary['critic/score/mean'], {
      last: 4,
      lastStep: 20,
      best: 4,
      bestStep: 4,
      mode: 'max',
    });
    assert.equal(summary['actor/loss']?.mode, 'min');
  });

  it('never appends to a log file at its place that it did not write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const spec = testSpec({}, dir);
    const runDir = runArchiveDir(spec.storage, spec.name, 'w');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(runDir, { recursive: true });
    await writeFile(trainLogPath(runDir, handle.name), 'a user file\n');
    const head = new FakeRayHead();
    head.status = 'SUCCEEDED';
    head.logs = 'step:20 - x:1\n';
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'w', runId: 'r' } });
    await env.run(createTrain(deps(head)), {
      spec,
      handle,
      checkpointDir: dir,
      resume: { mode: 'disable' as const },
    });
    assert.equal(await readFile(trainLogPath(runDir, handle.name), 'utf8'), 'a user file\n');
    assert.equal(await readFile(trainLogPath(runDir, handle.name, 1), 'utf8'), head.logs);
  });

  it('stops the job when the activity is cancelled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-'));
    const head = new FakeRayHead();
    const env = new MockActivityEnvironment();
    const running = env.run(createTrain(deps(head)), {
      spec: testSpec({}, dir),
      handle,
      checkpointDir: dir,
      resume: { mode: 'disable' as const },
    });
    await waitUntil('the job submitted', () => head.submitted.length === 1);
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
    const result: { workersAlive: number } = await env.run(createAwaitJoin(deps(new FakeRayHead(), status)), {
      spec: testSpec(),
      handle,
    });
    assert.equal(result.workersAlive, 2);
    assert.deepEqual(beats[0], { nodesAlive: 0, gpusRegistered: 1 });
    assert.deepEqual(beats.at(-1), { nodesAlive: 0, gpusRegistered: 2 });
  });

  it('refuses a head whose Ray version differs from rayVersion', async () => {
    const env = new MockActivityEnvironment();
    const status = () => ({ ...readyCluster(2, 2), headRayVersion: '2.49.0' });
    await assert.rejects(
      env.run(createAwaitJoin(deps(new FakeRayHead(), status)), { spec: testSpec(), handle }),
      /runs Ray 2\.49\.0, the spec declares rayVersion 2\.60\.0/,
    );
  });
});

describe('train activity: a checkpoint of another world size', () => {
  const saved = async (worldSize: number) => {
    const dir = await mkdtemp(join(tmpdir(), 'train-ws-'));
    const ckpt = join(dir, 'global_step_10');
    await mkdir(join(ckpt, 'actor'), { recursive: true });
    for (let r = 0; r < worldSize; r++)
      for (const kind of ['model', 'optim', 'extra_state'])
        await writeFile(join(ckpt, 'actor', `${kind}_world_size_${worldSize}_rank_${r}.pt`), 'x');
    return { dir, ckpt };
  };

  it('is refused before any job is submitted (CheckpointUnusable), naming both world sizes and the fix', async () => {
    const { dir, ckpt } = await saved(4);
    const head = new FakeRayHead();
    const spec = testSpec({}, dir); // 2 nodes x 1 GPU
    // Were it submitted, the job would fail as a crash: the test then fails on the type, not a hang.
    const stop = setTimeout(() => (head.status = 'FAILED'), 300);
    await assert.rejects(
      new MockActivityEnvironment().run(createTrain(deps(head)), {
        spec,
        handle,
        checkpointDir: dir,
        resume: { mode: 'resume_path' as const, path: ckpt },
      }),
      (err: unknown) => {
        const e = err as { type?: string; message: string };
        assert.equal(e.type, 'CheckpointUnusable');
        assert.match(e.message, /saved by 4 GPUs/);
        assert.match(e.message, /trainer\.nnodes x trainer\.nGpusPerNode = 2 x 1 = 2/);
        assert.match(e.message, /resume with the shape it was saved with \(nnodes x nGpusPerNode = 4/);
        return true;
      },
    );
    clearTimeout(stop);
    assert.deepEqual(head.submitted, [], 'no job was submitted');
  });

  it('the same world size resumes', async () => {
    const { dir, ckpt } = await saved(2);
    const head = new FakeRayHead();
    const running = new MockActivityEnvironment().run(createTrain(deps(head)), {
      spec: testSpec({}, dir),
      handle,
      checkpointDir: dir,
      resume: { mode: 'resume_path' as const, path: ckpt },
    });
    await Promise.race([
      waitUntil('the job submitted', () => head.submitted.length === 1),
      running.catch(() => undefined),
    ]);
    head.status = 'FAILED';
    await running.catch(() => undefined);
    assert.equal(head.submitted.length, 1, 'the job was submitted');
  });
});
