/**
 * Fault injection on the real stack: Temporal dev server (database file), the worker as its own
 * process, real Ray (local backend), the real payload. Every scenario ends with: no Ray process
 * left, every checkpoint completed before the fault still there with the same hash, the right final
 * step, the right outcome in the campaign manifest. Numbers for the report are printed, not asserted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { hashCheckpoint } from '../../src/activities/checkpoints/checkpoints.js';
import {
  CampaignManifestSchema,
  type CampaignManifest,
  type CampaignResult,
} from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { shortHash } from '../../src/domain/spec/naming.js';
import { campaignManifestPath, checkpointPath } from '../../src/domain/spec/paths.js';
import { wandbRunId } from '../../src/domain/tracking/wandb-env.js';
import { pauseUpdate, resumeUpdate } from '../../src/workflows/campaign-definitions.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import { outcomeOf, restartsInMetrics } from '../helpers/campaign-outcome.js';
import { FaultHarness, completedCheckpointHashes } from '../helpers/fault-harness.js';
import { startMlflowServer } from '../helpers/mlflow-server.js';
import { rayProcesses } from '../helpers/processes.js';
import { filesContaining } from '../helpers/secrets-grep.js';

let h: FaultHarness;
let mlflow: Awaited<ReturnType<typeof startMlflowServer>>;
/** The worker's credentials (issue 17 item 4): scenario 5 checks that no record of the run holds them. */
const SECRETS = {
  WANDB_API_KEY: `wandb-key-never-recorded-${process.pid}`,
  MLFLOW_TRACKING_TOKEN: `mlflow-token-never-recorded-${process.pid}`,
};
const suiteStarted = Date.now();
const numbers: string[] = [];
const note = (line: string) => {
  numbers.push(line);
  console.log(`[fault numbers] ${line}`);
};

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the suite');
  Object.assign(process.env, SECRETS); // the worker process inherits them
  [h, mlflow] = await Promise.all([FaultHarness.start(), startMlflowServer()]);
});
after(async () => {
  await Promise.all([h?.close(), mlflow?.stop()]);
  for (const name of Object.keys(SECRETS)) delete process.env[name];
  note(`suite wall time ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s`);
  console.log(`[fault numbers] summary:\n  ${numbers.join('\n  ')}`);
});

/** The checks every scenario ends with. */
async function assertEnd(
  spec: ExperimentSpec,
  id: string,
  expected: { outcome: CampaignManifest['outcome']; finalStep?: number; before: Map<number, string> },
): Promise<CampaignManifest> {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  assert.deepEqual(await h.clustersOf(`${id}-a1`), [], 'no cluster state is left');
  const dir = h.checkpointDir(spec, id);
  for (const [step, sha] of expected.before) {
    assert.equal(
      (await hashCheckpoint(dir, step)).sha256,
      sha,
      `checkpoint ${step}, complete before the fault, is unchanged`,
    );
  }
  const manifest = CampaignManifestSchema.parse(
    JSON.parse(await readFile(campaignManifestPath(spec.storage.archiveDir, spec.name, id), 'utf8')),
  );
  assert.equal(manifest.outcome, expected.outcome, manifest.reason);
  if (expected.finalStep !== undefined) assert.equal(manifest.attempts.at(-1)?.finalStep, expected.finalStep);
  for (const a of manifest.attempts) {
    const attemptManifest = ManifestSchema.parse(JSON.parse(await readFile(a.manifestPath, 'utf8')));
    assert.equal(
      attemptManifest.resumedFrom,
      a.startedFrom,
      'each attempt manifest records where it started',
    );
    assert.ok(a.manifestSha256, 'the campaign manifest links the attempt manifest by hash');
  }
  for (const [step, sha] of expected.before)
    assert.equal(manifest.checkpoints.find((c) => c.step === step)?.sha256, sha, `ledger hash of ${step}`);
  return manifest;
}

/** Steps trained but lost at the first restart (none: 0). */
async function stepsLost(checkpointDir: string): Promise<number> {
  return (await restartsInMetrics(checkpointDir))[0]?.lost ?? 0;
}

/**
 * Both attempts wrote one W&B run (offline: one run file per attempt, the campaign's run id, the
 * steps continuing from the resumed checkpoint), each attempt is tracked in MLflow, and neither
 * credential is in the workflow histories, the manifests, logs, tracking records, W&B files, the
 * MLflow server's store or the Temporal server's database.
 */
async function assertOneWandbRunAndNoSecrets(spec: ExperimentSpec, id: string, result?: CampaignResult) {
  const python = join(loadConfig().RAGEN_VENV, 'bin', 'python');
  const reader = join(REPO_ROOT, 'payload', 'tests', 'wandb_offline.py');
  const runs = JSON.parse(
    execFileSync(python, [reader, h.checkpointDir(spec, id)], { encoding: 'utf8' }),
  ) as { run_id: string; project: string; steps: number[]; exit_code: number }[];
  assert.deepEqual(
    runs.map((r) => [r.run_id, r.project, r.exit_code]),
    [
      [wandbRunId(id), 'fault5', 1],
      [wandbRunId(id), 'fault5', 0],
    ],
  );
  assert.deepEqual(runs[0]?.steps, [1, 2, 3, 4, 5], 'attempt 1: steps 1-5, then the fault');
  assert.deepEqual(runs[1]?.steps, [5, 6, 7, 8], 'attempt 2 resumes after checkpoint 4');
  const attempts = result?.attempts ?? [];
  for (const a of attempts) {
    const record = await readFile(join(dirname(a.manifestPath), 'tracking.json'), 'utf8');
    assert.ok((JSON.parse(record) as { runId?: string }).runId, `attempt tracked in MLflow: ${record}`);
  }
  const histories = [id, ...attempts.map((a) => a.workflowId)];
  for (const wf of histories) {
    const history = JSON.stringify(await h.client.workflow.getHandle(wf).fetchHistory());
    for (const [name, value] of Object.entries(SECRETS))
      assert.ok(!history.includes(value), `${name} is in the history of ${wf}`);
  }
  assert.deepEqual(await filesContaining([h.dir, mlflow.dir], SECRETS), [], 'no file holds a credential');
}

describe('campaign fault injection (real dev server, worker process, real Ray, real payload)', () => {
  it('5: the trainer exits non-zero; the next attempt resumes from the latest checkpoint', async () => {
    const id = `fault5-${process.pid}`;
    // Checkpoints at 2 and 4; the payload's test-only hook exits 1 once, after step 5.
    const spec = h.spec(8, { 'fault.exit_after_step': 5 });
    // Tracked in MLflow and W&B (offline), with the worker holding both credentials.
    spec.trainer.loggers = ['console', 'file', 'wandb'];
    spec.tracking = {
      mlflow: { uri: mlflow.uri, experiment: id },
      wandb: { project: 'fault5', mode: 'offline' },
    };
    const handle = await h.startCampaign(id, spec);
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    const [a1, a2] = result?.attempts ?? [];
    assert.equal(a1?.ended.type, ErrorTypes.TrainingFailed);
    assert.match(a1?.ended.message ?? '', /fault injection/);
    assert.equal(a2?.startedFrom, checkpointPath(h.checkpointDir(spec, id), 4));
    assert.equal(a2?.previousEnded?.type, ErrorTypes.TrainingFailed);
    // What attempt 1 archived right after the fault is what the campaign still has.
    const first = ManifestSchema.parse(JSON.parse(await readFile(a1?.manifestPath ?? '', 'utf8')));
    const before = new Map(first.checkpoints.map((c) => [c.step, c.sha256]));
    assert.deepEqual([...before.keys()], [2, 4]);
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 8, before });
    const childEvents = [];
    for (const a of result?.attempts ?? [])
      childEvents.push((await h.client.workflow.getHandle(a.workflowId).fetchHistory()).events?.length ?? 0);
    const lost = await stepsLost(h.checkpointDir(spec, id));
    assert.ok(lost <= spec.trainer.saveFreq, `steps lost ${lost} <= save_freq`);
    await assertOneWandbRunAndNoSecrets(spec, id, result);
    note(
      `5 non-zero exit: steps lost ${lost} (save_freq ${spec.trainer.saveFreq}); campaign history ${JSON.stringify(result?.historyEventsPerRun)} events for ${result?.attempts.length} attempts; attempt (child) histories ${JSON.stringify(childEvents)} events`,
    );
  });

  it('2: a Ray worker node is killed during training; the cluster is torn down and the next attempt resumes', async () => {
    const id = `fault2-${process.pid}`;
    const spec = h.spec(40);
    const handle = await h.startCampaign(id, spec);
    const at = await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 4, 'checkpoint 4');
    const [cluster] = await h.clustersOf(`${id}-a1`);
    assert.ok(cluster?.workerPids[0], 'the attempt has a local cluster with worker nodes');
    const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
    const killedAt = Date.now();
    process.kill(-cluster.workerPids[0], 'SIGKILL'); // the node's whole process group: raylet and its workers
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    const [a1, a2] = result?.attempts ?? [];
    assert.ok(
      [ErrorTypes.ClusterLost, ErrorTypes.TrainingFailed, ErrorTypes.NoProgress].includes(
        a1?.ended.type as never,
      ),
      `attempt 1 ended with ${a1?.ended.type}`,
    );
    assert.ok((a2?.startedFromStep ?? 0) >= Math.max(...before.keys()), 'resumed from the latest checkpoint');
    const trainEnd = a1?.stages?.find((s) => s.stage === 'train')?.endedAt;
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 40, before });
    const lost = await stepsLost(h.checkpointDir(spec, id));
    assert.ok(lost <= spec.trainer.saveFreq, `steps lost ${lost} <= save_freq`);
    note(
      `2 worker node killed (after checkpoint ${at.lastCheckpointStep} was reported): detected after ${trainEnd ? ((Date.parse(trainEnd) - killedAt) / 1000).toFixed(1) : '?'} s as ${a1?.ended.type}; resumed from step ${a2?.startedFromStep}; steps lost ${lost} (save_freq ${spec.trainer.saveFreq})`,
    );
  });

  it('1: the worker process is killed during training and started again; the run continues on the same cluster', async () => {
    const id = `fault1-${process.pid}`;
    const spec = h.spec(60);
    const handle = await h.startCampaign(id, spec);
    await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 2, 'checkpoint 2');
    const clusters = await h.clustersOf(`${id}-a1`);
    assert.equal(clusters.length, 1);
    const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
    const killedAt = Date.now();
    await h.killWorker();
    await sleep(2000);
    await h.startWorker();
    const restartedAt = Date.now();
    // The Ray job went on without the worker; the same cluster (same processes) is still the only one.
    assert.deepEqual(await h.clustersOf(`${id}-a1`), clusters, 'no second cluster, the first one untouched');
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.attempts.length, 1, 'one attempt: the crash was absorbed inside it');
    assert.equal(result?.attempts[0]?.submits, 1, 'one cluster created');
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 60, before });
    note(
      `1 worker process killed: worker down ${((restartedAt - killedAt) / 1000).toFixed(1)} s; campaign done ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart (train activity heartbeat timeout 60 s); 0 steps lost`,
    );
  });

  it('6: pause stops after the next checkpoint and frees the cluster; resume continues from that checkpoint', async () => {
    const id = `fault6-${process.pid}`;
    const spec = h.spec(60);
    const handle = await h.startCampaign(id, spec);
    const at = await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 2, 'checkpoint 2');
    await handle.executeUpdate(pauseUpdate);
    const paused = await h.waitForProgress(handle, (p) => p.phase === 'paused', 'the pause');
    assert.ok(
      paused.lastCheckpointStep > at.lastCheckpointStep,
      'a checkpoint newer than the one at pause time',
    );
    assert.deepEqual(await h.clustersOf(`${id}-a1`), [], 'no cluster while paused');
    assert.deepEqual(await rayProcesses(), [], 'no Ray process (no GPU held) while paused');
    const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
    await sleep(2000);
    assert.equal((await handle.query<{ phase: string }>('progress')).phase, 'paused', 'it waits');
    await handle.executeUpdate(resumeUpdate);
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    assert.deepEqual(
      result?.attempts.map((a) => a.outcome),
      ['paused', 'succeeded'],
    );
    assert.equal(result?.attempts[1]?.startedFromStep, paused.lastCheckpointStep);
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 60, before });
    note(
      `6 pause: asked at checkpoint ${at.lastCheckpointStep}, stopped after checkpoint ${paused.lastCheckpointStep}; resumed from ${result?.attempts[1]?.startedFromStep}`,
    );
  });

  for (const stage of ['join', 'train', 'validate'] as const) {
    it(`4: cancel during ${stage}: teardown happens, the manifests say cancelled`, async () => {
      const id = `fault4-${stage}-${process.pid}`;
      const spec = h.spec(stage === 'train' ? 60 : 6);
      if (stage === 'validate') spec.validation.episodes = 4000; // long enough to be seen running
      const handle = await h.startCampaign(id, spec);
      const child = h.client.workflow.getHandle(`${id}-a1`);
      const deadline = Date.now() + 300_000;
      for (;;) {
        const now = await child.query<string>('stage').catch(() => '');
        if (now === stage) break;
        assert.ok(Date.now() < deadline, `stage ${stage} not reached (at ${now})`);
        await sleep(200);
      }
      if (stage === 'train')
        await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 2, 'checkpoint 2');
      const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
      await handle.cancel();
      const { error } = await outcomeOf(handle);
      assert.ok(
        error instanceof WorkflowFailedError && error.cause?.name === 'CancelledFailure',
        String(error),
      );
      const manifest = await assertEnd(spec, id, { outcome: 'cancelled', before });
      assert.equal(manifest.attempts[0]?.outcome, 'cancelled');
      const attempt = ManifestSchema.parse(
        JSON.parse(await readFile(manifest.attempts[0]?.manifestPath ?? '', 'utf8')),
      );
      assert.equal(attempt.outcome, 'cancelled');
    });
  }

  it('7: storage not writable: refused in preflight, nothing created', async () => {
    const id = `fault7-${process.pid}`;
    const spec = h.spec(6);
    const file = join(h.dir, 'a-file');
    await writeFile(file, 'not a directory');
    // Running as root ignores permission bits, so the path goes through a regular file (ENOTDIR).
    spec.storage.checkpointDir = join(file, 'checkpoints');
    const handle = await h.startCampaign(id, spec);
    const { result, error } = await outcomeOf(handle);
    assert.ok(error instanceof WorkflowFailedError);
    assert.equal((error.cause as { type?: string }).type, ErrorTypes.StorageNotWritable);
    assert.equal(result?.attempts.length, 1, 'no second attempt: no attempt can fix storage');
    assert.match(
      result?.attempts[0]?.ended.message ?? '',
      /storage not writable: writable:.*a-file\/checkpoints/,
    );
    assert.deepEqual(await h.clustersOf(`${id}-a1`), []);
    assert.ok(
      !(await readdir(h.runRoot).catch(() => [] as string[])).some((d) => d.includes(shortHash(`${id}-a1`))),
      'no cluster dir was made',
    );
    await assertEnd(spec, id, { outcome: 'failed', before: new Map() }).catch((err: Error) => {
      // The attempt made no manifest either (preflight failed before verify): only the campaign's is expected.
      if (!/ENOENT.*fault7-.*-a1\/manifest\.json/.test(err.message)) throw err;
    });
  });

  it('3: the Temporal dev server is stopped and started again during training; the campaign continues', async () => {
    const id = `fault3-${process.pid}`;
    const spec = h.spec(60);
    const handle = await h.startCampaign(id, spec);
    await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 2, 'checkpoint 2');
    const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
    const stoppedAt = Date.now();
    await h.stopServer();
    await sleep(3000);
    await h.startServer();
    const downFor = (Date.now() - stoppedAt) / 1000;
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 60, before });
    note(
      `3 dev server restart: server down ${downFor.toFixed(1)} s during training; finished ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after the stop; attempts ${result?.attempts.length}`,
    );
  });
});
