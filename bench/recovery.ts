/**
 * Recovery of a campaign from a lost node (issue 34, item 3). Three cases, N runs each (argv[2],
 * default 1):
 *   kuberay pod-delete: a worker Pod of the attempt's RayCluster is deleted (`kubectl delete pod`:
 *     the Pod's own grace period, then the stand-in kubelet kills what is left);
 *   kuberay node-kill: every process of a worker Pod is killed with SIGKILL at once (a crashed
 *     node: raylet, workers, object store), the Pod object left as it is;
 *   local node-kill: a Ray worker node of the local backend's cluster is killed (its process
 *     group, SIGKILL), as test/faults/campaign-faults.test.ts case 2 does.
 * KubeRay: the kuberay test environment (real etcd, kube-apiserver, KubeRay operator v1.5.0, the
 * stand-in kubelet running the Pods as processes with real Ray in them), a real Temporal dev
 * server and the product's worker as a process of its own (bench/standins/kuberay-worker.ts, the
 * product's default settings: poll interval RAGEN_POLL_INTERVAL_MS 2 s). Local: the fault harness
 * (test/helpers/fault-harness.ts: dev server, src/worker/worker.ts as a process, poll interval 1 s).
 *
 * Each run starts a campaign of argv[3] steps (default 400) with checkpoints every argv[4] steps
 * (default 75: a checkpoint every ~12 s at the kuberay payload's ~0.16 s a step), waits until the
 * first checkpoint is complete (its tracker) and the payload has logged half a save interval past
 * it (metrics.jsonl under the campaign's checkpoint dir, on the shared volume), then injects the
 * fault (t0) and measures, in seconds after t0:
 *   - node gone: none of the faulted node's processes runs any more (a deleted Pod's processes
 *     get SIGTERM, then SIGKILL after the Pod's grace period);
 *   - fault recorded: the earliest point the product records the failure, the failed attempt's
 *     (child workflow's) `train` activity closing (ActivityTaskFailed or TimedOut in its history:
 *     the attempt's train stage ends with that error; the stage query turns to teardown);
 *   - attempt ended: the failed attempt's workflow closed (after its teardown and archive), and
 *     next attempt started: the campaign started the next child (its lineage record is written);
 *   - new cluster created: the next attempt's submitCluster activity completed; workers joined:
 *     its awaitJoin completed. The new cluster's own start time is submitCluster scheduled ->
 *     awaitJoin completed (every worker joined Ray); on KubeRay also create -> every Pod Ready
 *     (the stand-in kubelet's readiness times);
 *   - first training step of the new cluster: metrics.jsonl has, after the restart, a step past
 *     the one the next attempt resumed from (its input's resumeFrom);
 *   - steps lost: the last step logged before the restart minus the step resumed from.
 * Goals: first training step <= 90 s + the new cluster's own start time; steps lost <= save_freq.
 * Once the new cluster trains, the campaign is cancelled (graceful: archive, teardown) so the
 * bench stays short; training to the end is what the fault tests check.
 *
 *   flock /tmp/ray-test.lock npx tsx bench/recovery.ts [N=1] [steps=400] [saveFreq=75]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { type Payload, defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { readTracker } from '../src/activities/checkpoints/checkpoints.js';
import { type CampaignBudgets, stepOfCheckpointPath } from '../src/domain/campaign/campaign.js';
import type { ExperimentInput } from '../src/domain/run/experiment-input.js';
import type { ExperimentSpec } from '../src/domain/spec/experiment.js';
import { runCheckpointDir } from '../src/domain/spec/paths.js';
import type { campaign } from '../src/workflows/campaign.js';
import { metricsSteps, outcomeOf, restartsInMetrics } from '../test/helpers/campaign-outcome.js';
import { FaultHarness } from '../test/helpers/fault-harness.js';
import { type KubeEnv, startKubeEnv } from '../test/helpers/kube-env.js';
import { clustersOwnedBy, signal } from '../test/helpers/local-cluster-faults.js';
import { pushSokobanImage } from '../test/helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../test/helpers/oci-registry.js';
import { testInput } from '../test/helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../test/helpers/temporal.js';
import {
  type ActivitySpan,
  type BenchWorker,
  activitySpans,
  eventMs,
  interrupted,
  kuberayBenchSpec,
  median,
  runRoot,
  secs,
  settle,
  startWorker,
} from './kube-bench.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/recovery.ts',
  'bench/kube-bench.ts',
  'src',
  'probes/ragen_probes',
  'payload/ragen_toy',
];

const runsEach = Number(process.argv[2] ?? 1);
const steps = Number(process.argv[3] ?? 400);
const saveFreq = Number(process.argv[4] ?? 75);
const GOAL_SECONDS = 90;
const OBSERVE_MS = 250;
const BUDGETS: CampaignBudgets = {
  maxAttempts: 3,
  maxAttemptsWithoutNewCheckpoint: 2,
  historyEventsBeforeContinueAsNew: 2000,
};

type CaseName = 'kuberay pod-delete' | 'kuberay node-kill' | 'local node-kill';
const CASES: CaseName[] = ['kuberay pod-delete', 'kuberay node-kill', 'local node-kill'];

/** One run of one case, seconds after the fault (t0). */
interface RecoveryRecord {
  case: CaseName;
  run: number;
  fault: string;
  /** Last step logged before the fault was injected, and the checkpoint complete then. */
  stepAtFault: number;
  checkpointAtFault: number;
  /** The faulted node's processes all gone (a deleted Pod's go after its grace period). */
  nodeGone?: number;
  faultRecorded?: number;
  /** How the failed attempt's train stage ended (error type: the message's first line, cut at 240). */
  recordedAs?: string;
  attemptEnded?: number;
  nextAttemptStarted?: number;
  newClusterCreated?: number;
  workersJoined?: number;
  /** The new cluster's own start: submitCluster scheduled -> awaitJoin completed. */
  newClusterOwnStart?: number;
  /** KubeRay: the new cluster's submitCluster scheduled -> every Pod Ready. */
  newClusterPodsReadyFromCreate?: number;
  firstTrainingStep?: number;
  lastStepBeforeFault?: number;
  resumedFromStep?: number;
  stepsLost?: number;
  goals?: { firstStepLimit: number; firstStepMet: boolean; stepsLostMet: boolean };
  error?: string;
}

/** What an attempt's (child workflow's) history says: its start and input, its activities' times, its close. */
async function attemptTimeline(client: Client, workflowId: string) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const activities = new Map<string, ActivitySpan>(); // each type's first run
  for (const a of activitySpans(events)) if (!activities.has(a.type)) activities.set(a.type, a);
  let startedAt: number | undefined;
  let input: ExperimentInput | undefined;
  let closedAt: number | undefined;
  for (const e of events) {
    const started = e.workflowExecutionStartedEventAttributes;
    if (started) {
      startedAt = eventMs(e.eventTime);
      const payload = started.input?.payloads?.[0];
      if (payload) input = defaultPayloadConverter.fromPayload<ExperimentInput>(payload as Payload);
    }
    if (
      e.workflowExecutionCompletedEventAttributes ??
      e.workflowExecutionFailedEventAttributes ??
      e.workflowExecutionCanceledEventAttributes ??
      e.workflowExecutionTerminatedEventAttributes
    )
      closedAt = eventMs(e.eventTime);
  }
  return { startedAt, input, closedAt, activities };
}

/** Waits for `done` (asked every OBSERVE_MS); throws when the campaign has closed, on a signal or at the timeout. */
async function until(
  what: string,
  handle: WorkflowHandle,
  done: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let asked = 0;
  while (!(await done())) {
    interrupted.signal.throwIfAborted();
    if (Date.now() - asked > 2000) {
      asked = Date.now();
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') throw new Error(`the campaign is ${status.name} before ${what}`);
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(OBSERVE_MS);
  }
}

/**
 * One run: the campaign `handle` trains past its first checkpoint, `inject` faults it, and the
 * next attempt's cluster trains; then the campaign is cancelled. `extra` adds a backend's own
 * numbers (given the next attempt's create time).
 */
async function measure(o: {
  case: CaseName;
  run: number;
  client: Client;
  handle: WorkflowHandle<typeof campaign>;
  checkpointDir: string;
  /** Injects the fault; `gone` tells whether the node's processes are all gone. */
  inject: (attemptId: string) => Promise<{ fault: string; gone: () => Promise<boolean> }>;
  extra?: (createAt: number | undefined) => Partial<RecoveryRecord>;
}): Promise<RecoveryRecord> {
  const { handle, checkpointDir: dir, client } = o;
  const id = handle.workflowId;
  let checkpoint = 0;
  let stepAtFault = 0;
  await until(
    `checkpoint ${saveFreq} and ${Math.ceil(saveFreq / 2)} steps past it`,
    handle,
    async () => {
      checkpoint = (await readTracker(dir)) ?? 0;
      stepAtFault = (await metricsSteps(dir)).at(-1) ?? 0;
      return checkpoint >= saveFreq && stepAtFault >= checkpoint + saveFreq / 2;
    },
    600_000,
  );
  const t0 = Date.now();
  const { fault, gone } = await o.inject(`${id}-a1`);
  const record: RecoveryRecord = {
    case: o.case,
    run: o.run,
    fault,
    stepAtFault,
    checkpointAtFault: checkpoint,
  };
  console.log(`${o.case} #${o.run}: ${fault} at step ${stepAtFault} (checkpoint ${checkpoint})`);
  try {
    // The next attempt's input names the checkpoint it resumes from; its first step past that
    // after the restart in metrics.jsonl is the new cluster's first training step.
    let resumedFromStep: number | undefined;
    let firstStepAt: number | undefined;
    let goneAt: number | undefined;
    await until(
      'the next attempt trains',
      handle,
      async () => {
        if (goneAt === undefined && (await gone())) goneAt = Date.now();
        if (resumedFromStep === undefined) {
          const next = await attemptTimeline(client, `${id}-a2`).catch(() => undefined);
          if (!next?.input) return false;
          resumedFromStep = stepOfCheckpointPath(next.input.resumeFrom);
        }
        const logged = await metricsSteps(dir);
        const restart = logged.findIndex((s, i) => i > 0 && s <= (logged[i - 1] ?? 0));
        if (restart < 0 || !logged.slice(restart).some((s) => s > (resumedFromStep ?? 0))) return false;
        firstStepAt = Date.now();
        return true;
      },
      600_000,
    );
    const failed = await attemptTimeline(client, `${id}-a1`);
    const next = await attemptTimeline(client, `${id}-a2`);
    const train = failed.activities.get('train');
    const submit = next.activities.get('submitCluster');
    const join = next.activities.get('awaitJoin');
    const lastStepBeforeFault = (await restartsInMetrics(dir))[0]?.lastStep;
    const stepsLost =
      lastStepBeforeFault !== undefined && resumedFromStep !== undefined
        ? lastStepBeforeFault - resumedFromStep
        : undefined;
    const ownStart = secs(submit?.scheduledAt, join?.closedAt);
    const firstTrainingStep = secs(t0, firstStepAt);
    Object.assign(record, {
      nodeGone: secs(t0, goneAt),
      faultRecorded: secs(t0, train?.failure ? train.closedAt : undefined),
      recordedAs: train?.failure ?? `the train activity did not fail (closed: ${train !== undefined})`,
      attemptEnded: secs(t0, failed.closedAt),
      nextAttemptStarted: secs(t0, next.startedAt),
      newClusterCreated: secs(t0, submit?.closedAt),
      workersJoined: secs(t0, join?.closedAt),
      newClusterOwnStart: ownStart,
      firstTrainingStep,
      lastStepBeforeFault,
      resumedFromStep,
      stepsLost,
      ...o.extra?.(submit?.scheduledAt),
    });
    const firstStepLimit = GOAL_SECONDS + (ownStart ?? 0);
    record.goals = {
      firstStepLimit,
      firstStepMet: firstTrainingStep !== undefined && firstTrainingStep <= firstStepLimit,
      stepsLostMet: stepsLost !== undefined && stepsLost <= saveFreq,
    };
  } catch (err) {
    record.error = (err as Error).message;
  } finally {
    // Graceful: the running attempt archives and tears its cluster down.
    await handle.cancel().catch(() => undefined);
    // An unref'd timer: once the campaign has ended, it must not keep the bench (and the lock) alive.
    await Promise.race([outcomeOf(handle), sleep(300_000, undefined, { ref: false })]);
  }
  console.log(`${o.case} #${o.run}: ${JSON.stringify(record)}`);
  return record;
}

/** Whether `pid` runs (a zombie, killed but not yet reaped, does not). */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** Whether a process of group `pgid` exists (a zombie counts: kill(2) with signal 0). */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The first Running worker Pod of the KubeRay cluster (the only one: runs do not overlap). */
async function workerPod(kube: KubeEnv): Promise<V1Pod> {
  const core = kube.admin.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({
    namespace: kube.namespace,
    labelSelector: 'ray.io/node-type=worker',
  });
  const pod = pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  if (!pod) throw new Error('no Running worker Pod');
  return pod;
}

async function kuberayRuns(): Promise<{ runs: RecoveryRecord[]; kubeEnvStartSeconds: number }> {
  const kube = await startKubeEnv({ namespace: 'ragen-recovery' });
  let env: TestWorkflowEnvironment | undefined;
  let registry: RunningRegistry | undefined;
  let worker: BenchWorker | undefined;
  const scratch = await mkdtemp(join(tmpdir(), 'recovery-'));
  const runs: RecoveryRecord[] = [];
  try {
    console.log(`kube env started in ${(kube.startMs / 1000).toFixed(1)} s`);
    env = await devServerEnv();
    registry = await startRegistry();
    const image = await pushSokobanImage(registry);
    const bundlePath = join(scratch, 'workflow-bundle.js');
    await writeFile(bundlePath, (await workflowBundle()).code);
    const taskQueue = uniqueId('recovery');
    worker = await startWorker(env, kube, taskQueue, bundlePath);
    const kubelet = kube.kubelet!;
    const core = kube.admin.makeApiClient(CoreV1Api);
    for (let i = 1; i <= runsEach; i++) {
      for (const kind of ['pod-delete', 'node-kill'] as const) {
        await settle(kube);
        const id = uniqueId(`recovery-${kind}`);
        const spec = kuberayBenchSpec(kube, await runRoot(kube.storageDir, id), image, {
          steps,
          saveFreq,
          deadlines: { noProgressSeconds: 60 },
        });
        const handle = await startCampaign(env.client, taskQueue, id, spec);
        let faulted: { cluster?: string; startedIndex: number } = { startedIndex: 0 };
        runs.push(
          await measure({
            case: `kuberay ${kind}`,
            run: i,
            client: env.client,
            handle,
            checkpointDir: runCheckpointDir(spec.storage, spec.name, id),
            inject: async () => {
              const pod = await workerPod(kube);
              const name = pod.metadata?.name ?? '';
              faulted = {
                cluster: pod.metadata?.labels?.['ray.io/cluster'],
                startedIndex: kubelet.started.length,
              };
              const pids = await kubelet.podProcesses(name);
              const gone = async () => !(await Promise.all(pids.map(alive))).some(Boolean);
              if (kind === 'pod-delete') {
                await core.deleteNamespacedPod({ name, namespace: kube.namespace });
                const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
                return { fault: `deleted worker Pod ${name} (grace period ${grace} s)`, gone };
              }
              for (const pid of pids) signal(pid, 'SIGKILL');
              return { fault: `killed the ${pids.length} processes of worker Pod ${name}`, gone };
            },
            extra: (createAt) => {
              // The next cluster's Pods: started after the fault, of another RayCluster.
              const pods = kubelet.started
                .slice(faulted.startedIndex)
                .filter((p) => p.metadata?.labels?.['ray.io/cluster'] !== faulted.cluster);
              const ready = pods.map((p) => kubelet.readyAt.get(p.metadata?.name ?? ''));
              const all = pods.length > 0 && ready.every((t) => t !== undefined);
              return {
                newClusterPodsReadyFromCreate: all
                  ? secs(createAt, Math.max(...(ready as number[])))
                  : undefined,
              };
            },
          }),
        );
      }
    }
    await settle(kube);
    return { runs, kubeEnvStartSeconds: kube.startMs / 1000 };
  } finally {
    await worker?.stop();
    await registry?.stop();
    await env?.teardown();
    await kube.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

function startCampaign(
  client: Client,
  taskQueue: string,
  id: string,
  spec: ExperimentSpec,
): Promise<WorkflowHandle<typeof campaign>> {
  return client.workflow.start<typeof campaign>('campaign', {
    taskQueue,
    workflowId: id,
    args: [{ spec, budgets: BUDGETS, provenance: testInput(spec).provenance }],
  });
}

async function localRuns(): Promise<RecoveryRecord[]> {
  const h = await FaultHarness.start();
  const runs: RecoveryRecord[] = [];
  try {
    for (let i = 1; i <= runsEach; i++) {
      const id = uniqueId('recovery-local');
      const spec = h.spec(steps);
      spec.trainer.saveFreq = saveFreq;
      const handle = await h.startCampaign(id, spec, BUDGETS);
      runs.push(
        await measure({
          case: 'local node-kill',
          run: i,
          client: h.client,
          handle,
          checkpointDir: h.checkpointDir(spec, id),
          inject: async (attemptId) => {
            const [cluster] = await clustersOwnedBy(h.runRoot, attemptId);
            const pgid = cluster?.workerPgids[0];
            if (!pgid) throw new Error(`no local cluster with a worker node for ${attemptId}`);
            signal(-pgid, 'SIGKILL'); // the node's whole process group: raylet and its workers
            return {
              fault: `killed worker node process group ${pgid} of ${cluster.name}`,
              gone: () => Promise.resolve(!groupExists(pgid)),
            };
          },
        }),
      );
      const deadline = Date.now() + 120_000;
      while ((await clustersOwnedBy(h.runRoot, id)).length && Date.now() < deadline) await sleep(500);
    }
    return runs;
  } finally {
    await h.close();
  }
}

const started = Date.now();
const kuberay = await kuberayRuns();
const runs = [...kuberay.runs, ...(await localRuns())];

const rows: [string, (r: RecoveryRecord) => number | undefined][] = [
  ["faulted node's processes gone", (r) => r.nodeGone],
  ['fault recorded (train activity failed)', (r) => r.faultRecorded],
  ['failed attempt ended (teardown, archive)', (r) => r.attemptEnded],
  ['next attempt started', (r) => r.nextAttemptStarted],
  ['new cluster created (submitCluster done)', (r) => r.newClusterCreated],
  ['new cluster: workers joined', (r) => r.workersJoined],
  ['new cluster first training step', (r) => r.firstTrainingStep],
  ["new cluster's own start (submit -> joined)", (r) => r.newClusterOwnStart],
  ["new cluster's create -> Pods Ready (KubeRay)", (r) => r.newClusterPodsReadyFromCreate],
  ['goal: 90 s + own start', (r) => r.goals?.firstStepLimit],
  ['steps lost', (r) => r.stepsLost],
];
const cell = (x: number | undefined, d = 1) => (x === undefined ? '-' : x.toFixed(d)).padStart(20);
console.log(`\n${'median, s after the fault'.padEnd(46)}${CASES.map((c) => c.padStart(20)).join('')}`);
const medians: Record<string, Record<string, number | undefined>> = {};
for (const [label, f] of rows) {
  medians[label] = Object.fromEntries(CASES.map((c) => [c, median(runs.filter((r) => r.case === c).map(f))]));
  console.log(`${label.padEnd(46)}${CASES.map((c) => cell(medians[label]?.[c])).join('')}`);
}
const goals = Object.fromEntries(
  CASES.map((c) => {
    const of = runs.filter((r) => r.case === c);
    return [
      c,
      {
        runs: of.length,
        failedRuns: of.filter((r) => r.error).length,
        trainingWithin90sPlusOwnStart: of.length > 0 && of.every((r) => r.goals?.firstStepMet),
        stepsLostAtMostSaveFreq: of.length > 0 && of.every((r) => r.goals?.stepsLostMet),
      },
    ];
  }),
);
console.log(`\nsave_freq ${saveFreq}; goals (met in every run): ${JSON.stringify(goals, null, 2)}`);
for (const r of runs.filter((x) => x.error)) console.log(`${r.case} #${r.run} failed: ${r.error}`);
writeResults('recovery', measuredCode, {
  runsEach,
  steps,
  saveFreq,
  goalSeconds: GOAL_SECONDS,
  faultRecordedIs: "the failed attempt's train activity closing (ActivityTaskFailed/TimedOut in its history)",
  pollIntervalMs: { kuberay: Number(process.env['RAGEN_POLL_INTERVAL_MS'] ?? 2000), local: 1000 },
  kubeEnvStartSeconds: kuberay.kubeEnvStartSeconds,
  wallSeconds: (Date.now() - started) / 1000,
  medians,
  goals,
  runs,
});
