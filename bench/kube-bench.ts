/**
 * What the benches on the kuberay test environment (bench/vs-rayjob.ts, bench/recovery.ts) share:
 * an interruption that ends their waits, the product's worker as a process of its own
 * (bench/standins/kuberay-worker.ts), the kuberay tests' spec for a run, a run's folder on the
 * shared volume, waiting until the previous run left no Pod and no Ray process, the activities'
 * times in a workflow's history, and medians.
 *
 * Importing this module installs SIGINT/SIGTERM handlers: they abort `interrupted`, so a bench's
 * waits end and its `finally` stops every process it started.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { REPO_ROOT } from '../src/config/config.js';
import type { ExperimentSpec } from '../src/domain/spec/experiment.js';
import type { KubeEnv } from '../test/helpers/kube-env.js';
import { IMAGE_USER } from '../test/helpers/kubelet-standin/pod-spec.js';
import { kuberaySpec } from '../test/helpers/kuberay-specs.js';
import { rayProcesses } from '../test/helpers/processes.js';

export const interrupted = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => interrupted.abort(new Error(`${signal}: stopping`)));
/** Rejects once the bench is interrupted: race a wait against it. */
export const abortedPromise = new Promise<never>((_, reject) =>
  interrupted.signal.addEventListener('abort', () => reject(interrupted.signal.reason as Error)),
);
abortedPromise.catch(() => undefined);

/** Seconds from `from` to `to` (ms); undefined when either is missing. */
export const secs = (from: number | undefined, to: number | undefined) =>
  from !== undefined && to !== undefined ? (to - from) / 1000 : undefined;

/** ms since epoch of a history event's eventTime. */
export const eventMs = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** One run of an activity in a workflow's history: scheduled -> closed (ms), and why it failed. */
export interface ActivitySpan {
  type: string;
  scheduledAt: number;
  closedAt: number;
  /** A failed or timed-out run: its error type, the first line of its message (cut at 240). */
  failure?: string;
}

/** Every activity run of `events` that has closed, in the order they closed. */
export function activitySpans(events: HistoryEvent[]): ActivitySpan[] {
  const scheduled = new Map<string, { type: string; at: number }>();
  const spans: ActivitySpan[] = [];
  for (const e of events) {
    const at = eventMs(e.eventTime);
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '?', at });
    const failed = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    const closed = e.activityTaskCompletedEventAttributes ?? failed ?? e.activityTaskCanceledEventAttributes;
    const from = closed ? scheduled.get(String(closed.scheduledEventId)) : undefined;
    if (!from) continue;
    const f = failed?.failure;
    spans.push({
      type: from.type,
      scheduledAt: from.at,
      closedAt: at,
      ...(f && {
        failure: `${f.applicationFailureInfo?.type ?? f.timeoutFailureInfo?.timeoutType ?? '?'}: ${(f.message ?? '').split('\n')[0]?.slice(0, 240)}`,
      }),
    });
  }
  return spans;
}

export function median(values: (number | undefined)[]): number | undefined {
  const v = values.filter((x): x is number => x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : ((v[mid - 1] ?? 0) + (v[mid] ?? 0)) / 2;
}

/** A run's own folder on the shared volume, writable by the Pods' user (group 100, 2775). */
export async function runRoot(storage: string, name: string): Promise<string> {
  const dir = join(storage, name);
  await mkdir(dir, { recursive: true });
  await chown(dir, 0, IMAGE_USER.gid);
  await chmod(dir, 0o2775);
  return dir;
}

/** Waits until no Pod and no Ray process is left from the previous run. */
export async function settle(kube: KubeEnv): Promise<void> {
  const core = kube.admin.makeApiClient(CoreV1Api);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    interrupted.signal.throwIfAborted();
    const pods = await core.listNamespacedPod({ namespace: kube.namespace });
    if (!pods.items.length && !(await rayProcesses()).length) return;
    await sleep(500);
  }
  throw new Error('Pods or Ray processes left from the previous run after 120 s');
}

export interface BenchWorker {
  child: ChildProcess;
  requests(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * bench/standins/kuberay-worker.ts on `taskQueue`, against the env's dev server and kube-apiserver;
 * `env` adds to its environment (the product's settings, e.g. RAGEN_POLL_INTERVAL_MS).
 */
export async function startWorker(
  temporal: TestWorkflowEnvironment,
  kube: KubeEnv,
  taskQueue: string,
  bundlePath: string,
  env: Record<string, string> = {},
): Promise<BenchWorker> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/standins/kuberay-worker.ts'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: {
      ...process.env,
      ...env,
      TEMPORAL_ADDRESS: temporal.address,
      BENCH_TASK_QUEUE: taskQueue,
      BENCH_WORKFLOW_BUNDLE: bundlePath,
      BENCH_KUBECONFIG: kube.adminKubeconfig,
      BENCH_NAMESPACE: kube.namespace,
    },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  while (!out.includes('polling')) {
    if (child.exitCode !== null) throw new Error(`the bench worker exited with ${child.exitCode}`);
    await sleep(200);
  }
  return {
    child,
    requests: async () => {
      const answer = once(child, 'message') as Promise<[{ requests: number }]>;
      child.send('requests');
      return (await answer)[0].requests;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The kuberay tests' spec for a bench run: the run's folders under `root` on the volume (mounted
 * at its host path, so the Pods see them there too), `auth: none`, the file logger (the bench
 * reads metrics.jsonl), long join and run deadlines, and `deadlines` over those.
 */
export function kuberayBenchSpec(
  kube: KubeEnv,
  root: string,
  image: string,
  o: { steps: number; saveFreq: number; deadlines?: Partial<ExperimentSpec['deadlines']> },
): ExperimentSpec {
  const s = kuberaySpec(kube.storageDir, kube.pvc);
  return {
    ...s,
    image,
    storage: { ...s.storage, checkpointDir: join(root, 'checkpoints'), archiveDir: join(root, 'archive') },
    auth: 'none',
    deadlines: { ...s.deadlines, joinSeconds: 600, runSeconds: 7200, ...o.deadlines },
    trainer: {
      ...s.trainer,
      totalTrainingSteps: o.steps,
      saveFreq: o.saveFreq,
      loggers: ['console', 'file'],
    },
  };
}
