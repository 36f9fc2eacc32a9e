/**
 * The production topology, run for real: Temporal server v1.32.2 on PostgreSQL (the config the
 * repository keeps), two orchestrator worker processes, real Ray (local backend), the real payload.
 * During training one worker is killed with SIGKILL and then the server and PostgreSQL are
 * restarted; the sweep's children must finish as if nothing happened, on the surviving worker.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { REPO_ROOT } from '../../src/config/config.js';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { runCheckpointDir } from '../../src/domain/spec/paths.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { completedCheckpointHashes } from '../helpers/fault-harness.js';
import { rayProcesses } from '../helpers/processes.js';
import { testSpec } from '../helpers/specs.js';
import { sweepInput } from '../helpers/sweeps.js';
import { type PostgresTemporal, startPostgresTemporal } from '../helpers/temporal-postgres.js';
import { uniqueId, workflowBundle } from '../helpers/temporal.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const taskQueue = `pg-topology-${process.pid}`;
const runRoot = `/tmp/ro-pg-${process.pid}`;

let env: PostgresTemporal;
let dir: string;
let connection: Connection;
let client: Client;
const workers: { child: ChildProcess; identity: string; log: string }[] = [];

/** `src/worker/worker.ts` as its own OS process, as the CLI and the image run it; resolves once it polls. */
async function startWorker(bundlePath: string, n: number) {
  const logPath = join(dir, `worker-${n}.log`);
  const log = await open(logPath, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker/worker.ts'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', log.fd, log.fd],
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      RAGEN_TASK_QUEUE: taskQueue,
      RAGEN_RUN_ROOT: runRoot,
      RAGEN_POLL_INTERVAL_MS: '1000',
      RAGEN_WORKFLOW_BUNDLE: bundlePath,
    },
  });
  await log.close();
  const deadline = Date.now() + 180_000;
  while (!(await readFile(logPath, 'utf8')).includes('worker: polling task queue')) {
    if (child.exitCode !== null) throw new Error(`worker ${n} exited with ${child.exitCode}; see ${logPath}`);
    if (Date.now() > deadline) throw new Error(`worker ${n} did not start within 180 s; see ${logPath}`);
    await sleep(250);
  }
  // The SDK's default identity: the process id at the host name.
  return { child, identity: `${child.pid}@${hostname()}`, log: logPath };
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  // A worker waiting on its shutdown may ignore SIGTERM (see pitfalls): kill it after a grace period.
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
}

interface Event {
  eventType?: proto.temporal.api.enums.v1.EventType | null;
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  activityTaskStartedEventAttributes?: { identity?: string | null; attempt?: number | null } | null;
  activityTaskCompletedEventAttributes?: { identity?: string | null; scheduledEventId?: unknown } | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  workflowTaskCompletedEventAttributes?: { identity?: string | null } | null;
}
const eventMs = (e: Event) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

async function historyOf(workflowId: string): Promise<Event[]> {
  return (await client.workflow.getHandle(workflowId).fetchHistory()).events as Event[];
}

/** The worker identity that completed each activity, by activity name (the last completion wins). */
function activityCompleters(
  events: Event[],
): { name: string; identity: string; attempt: number; at: number }[] {
  const byId = new Map(events.map((e, i) => [i + 1, e]));
  const out = [];
  for (const e of events) {
    if (e.eventType !== EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
    const completed = e.activityTaskCompletedEventAttributes;
    const scheduledId = Number(completed?.scheduledEventId);
    const scheduled = byId.get(scheduledId)?.activityTaskScheduledEventAttributes;
    const started = events.find(
      (s) =>
        s.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        Number(
          (s as { activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } })
            .activityTaskStartedEventAttributes?.scheduledEventId,
        ) === scheduledId,
    );
    out.push({
      name: scheduled?.activityType?.name ?? '?',
      identity: completed?.identity ?? '?',
      attempt: started?.activityTaskStartedEventAttributes?.attempt ?? 0,
      at: eventMs(e),
    });
  }
  return out;
}

describe('production topology: Temporal server v1.32.2 on PostgreSQL, two worker processes, real Ray', () => {
  before(async () => {
    assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
    dir = await mkdtemp(join(tmpdir(), 'ragen-pg-topology-'));
    env = await startPostgresTemporal();
    connection = await Connection.connect({ address: env.address });
    client = new Client({ connection, namespace: env.namespace });
    // One bundle for both workers instead of each bundling the sources on start.
    const bundlePath = join(dir, 'workflow-bundle.js');
    await writeFile(bundlePath, (await workflowBundle()).code);
    workers.push(...(await Promise.all([startWorker(bundlePath, 1), startWorker(bundlePath, 2)])));
  });
  after(async () => {
    for (const w of workers) await stopWorker(w.child);
    await connection?.close();
    await env?.stop();
    await rm(runRoot, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  });
  it('a sweep survives a worker killed with SIGKILL and a server + PostgreSQL restart during training', async () => {
    const storage = join(dir, 'storage');
    const base = testSpec({}, storage);
    base.trainer.totalTrainingSteps = 24;
    base.trainer.saveFreq = 2;
    base.trainer.overrides = { 'trainer.val_before_train': false, 'es_manager.val.env_groups': 8 };
    base.validation.episodes = 16;
    base.deadlines = { joinSeconds: 120, runSeconds: 900, noProgressSeconds: 120, firstStepSeconds: 300 };
    const spec = parseSweepMapping(
      { name: 'pg-sweep', base, parameters: { grid: { 'trainer.seedTrain': [1, 2] } }, concurrency: 2 },
      'test',
    );
    const sweepId = uniqueId('pg-sweep');
    const started = Date.now();
    const handle = await client.workflow.start<typeof sweep>('sweep', {
      taskQueue,
      workflowId: sweepId,
      args: [sweepInput(spec)],
    });

    // A child in training on one worker with a completed checkpoint: that worker is the one to kill.
    let victim: { childId: string; worker: (typeof workers)[number] } | undefined;
    let before = new Map<number, string>();
    const deadline = Date.now() + 240_000;
    while (!victim) {
      if (Date.now() > deadline) throw new Error('no child reached a checkpoint in training within 240 s');
      await sleep(500);
      const children = ((await handle.describe()).raw.pendingChildren ?? []).map((c) => c.workflowId ?? '');
      for (const childId of children) {
        const desc = await client.workflow.getHandle(childId).describe();
        const train = desc.raw.pendingActivities?.find(
          (a) => a.activityType?.name === 'train' && a.lastWorkerIdentity,
        );
        const worker = workers.find((w) => w.identity === train?.lastWorkerIdentity);
        if (!worker) continue;
        // No checkpoint directory yet until the trainer writes its first checkpoint.
        before = await completedCheckpointHashes(runCheckpointDir(base.storage, base.name, childId)).catch(
          () => new Map<number, string>(),
        );
        if (before.size > 0) {
          victim = { childId, worker };
          break;
        }
      }
    }
    const survivor = workers.find((w) => w !== victim.worker);
    assert.ok(survivor);
    const killedAt = Date.now();
    victim.worker.child.kill('SIGKILL');
    await once(victim.worker.child, 'exit');
    const restartFrom = Date.now();
    const { downMs } = await env.restart();
    const restartedAt = Date.now();

    const result = await handle.result();
    console.log(
      `[pg numbers] sweep ${((Date.now() - started) / 1000).toFixed(1)} s; worker killed ${((killedAt - started) / 1000).toFixed(1)} s in; server + PostgreSQL down ${(downMs / 1000).toFixed(1)} s; done ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart (train heartbeat timeout 60 s)`,
    );
    assert.equal(result.succeeded, 2, JSON.stringify(result, null, 2));
    assert.deepEqual(await rayProcesses(), [], 'every child tore its cluster down');

    // PostgreSQL visibility answers the project's search attributes (registered by the helper).
    const listed = [];
    for await (const w of client.workflow.list({ query: `RagenSweepId = "${sweepId}"` }))
      listed.push(w.workflowId);
    assert.deepEqual(listed.sort(), [sweepId, ...result.ranked.map((r) => r.workflowId)].sort());

    // Checkpoints completed before the kill are still there, byte for byte; every child reached its last step.
    const after = await completedCheckpointHashes(runCheckpointDir(base.storage, base.name, victim.childId));
    for (const [step, sha] of before) assert.equal(after.get(step), sha, `checkpoint ${step} intact`);
    for (const row of result.ranked) {
      const manifest = ManifestSchema.parse(JSON.parse(await readFile(row.manifestPath ?? '', 'utf8')));
      assert.equal(manifest.outcome, 'succeeded');
      assert.equal(manifest.training.finalStep, 24);
    }

    // The histories: after the kill, only the survivor completes work; the victim's training moved to it.
    let lastBefore = 0;
    let firstAfter = Infinity;
    for (const id of [sweepId, ...result.ranked.map((r) => r.workflowId)]) {
      const events = await historyOf(id);
      for (const e of events) {
        const t = eventMs(e);
        if (t <= restartFrom) lastBefore = Math.max(lastBefore, t);
        else firstAfter = Math.min(firstAfter, t);
        const by = e.workflowTaskCompletedEventAttributes?.identity;
        if (by && t > restartedAt) assert.equal(by, survivor.identity, `${id}: workflow task after the kill`);
      }
      for (const a of activityCompleters(events)) {
        assert.ok(
          workers.some((w) => w.identity === a.identity),
          `${id}: ${a.name} completed by ${a.identity}, one of the two worker processes`,
        );
        if (a.at > restartedAt)
          assert.equal(a.identity, survivor.identity, `${id}: ${a.name} after the kill`);
      }
      if (id === victim.childId) {
        const train = activityCompleters(events).find((a) => a.name === 'train');
        assert.equal(
          train?.identity,
          survivor.identity,
          'the killed worker’s training completed on the survivor',
        );
        assert.ok((train?.attempt ?? 0) >= 2, 'as a retry of the killed attempt');
      }
    }
    console.log(
      `[pg numbers] restart absorbed: ${((firstAfter - lastBefore) / 1000).toFixed(1)} s from the last event before the restart to the first after it (server + PostgreSQL down ${(downMs / 1000).toFixed(1)} s; first event ${((firstAfter - restartedAt) / 1000).toFixed(1)} s after the server answered)`,
    );
  });
});
