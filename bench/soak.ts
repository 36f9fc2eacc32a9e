/**
 * Chaos soak (not in CI): N small campaigns and sweeps on the local backend (real dev server with a
 * database file, the worker as its own process, real Ray, real payload) under a seeded random fault
 * schedule; several faults may overlap. Prints per run and in total: outcome and whether it matches
 * the faults (rule: bench/soak-plan.ts expectedOutcome), clusters and Ray processes left,
 * checkpoints lost or changed, steps lost per restart, time from fault to detection and recovery.
 *   flock /tmp/ray-test.lock npx tsx bench/soak.ts [--runs 20] [--seed S] [--concurrency 2] [--stop-at ISO]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { clusterProcesses } from '../src/backends/local/processes.js';
import { parseSweepMapping } from '../src/cli/spec-files/load-sweep.js';
import type { CampaignProgress } from '../src/domain/campaign/campaign.js';
import type { ExperimentSpec } from '../src/domain/spec/experiment.js';
import { runCheckpointDir } from '../src/domain/spec/paths.js';
import { childWorkflowId, expandSweep } from '../src/domain/sweep/sweep-expand.js';
import type { SweepResult } from '../src/domain/sweep/sweep.js';
import { outcomeOf, restartsInMetrics } from '../test/helpers/campaign-outcome.js';
import { FaultHarness, completedCheckpointHashes } from '../test/helpers/fault-harness.js';
import {
  type LocalClusterView,
  clustersOwnedBy,
  fillVolume,
  mountTmpfs,
  rayletOf,
  signal,
  trainerDrivers,
  unmount,
} from '../test/helpers/local-cluster-faults.js';
import { rayProcesses } from '../test/helpers/processes.js';
import { sweepInput } from '../test/helpers/sweeps.js';
import { writeResults } from './results.js';
import { type FiredFault, type PlannedFault, type RunPlan, expectedOutcome, planRuns } from './soak-plan.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/soak.ts',
  'bench/soak-plan.ts',
  'src',
  'probes/ragen_probes',
  'payload/ragen_toy',
];

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    concurrency: { type: 'string', default: '2' },
    // On a shared machine: no new run starts after this time (ISO); the table says how many ran.
    'stop-at': { type: 'string' },
  },
});
const seed = Number(args.seed);
const runs = Number(args.runs);
const concurrency = Number(args.concurrency);
const stopAt = args['stop-at'] ? Date.parse(args['stop-at']) : Infinity;
const STEPS = 24;
const SAVE_FREQ = 4;

interface Sample {
  t: number;
  attempt: number;
  step: number;
  phase: string;
  closed: boolean;
}
interface Fired extends FiredFault {
  step: number;
  attempt: number;
  detail: string;
  detectedMs?: number;
  recoveredMs?: number;
}
interface RunReport {
  plan: RunPlan;
  id: string;
  outcome: string;
  expected: string;
  reason: string;
  fired: Fired[];
  notFired: string[];
  clustersLeft: number;
  rayLeft: number;
  lost: number[];
  changed: number[];
  stepsLost: number[];
  wallS: number;
}

/** Worker kills and server restarts hit every run at once: one at a time. */
let globalFault: Promise<void> = Promise.resolve();
function exclusive(fn: () => Promise<void>): Promise<void> {
  const next = globalFault.then(fn);
  globalFault = next.catch(() => undefined);
  return next;
}

const h = await FaultHarness.start();
const volumes: string[] = [];
const planned = planRuns(seed, runs);
console.log(
  `soak: seed ${seed}, ${runs} runs, concurrency ${concurrency}, ${STEPS} steps (save every ${SAVE_FREQ})`,
);
for (const p of planned)
  console.log(
    `  plan #${p.index} ${p.kind}: ${p.faults.map((f) => `${f.kind}@${f.trigger}+${(f.delayMs / 1000).toFixed(1)}s${f.kind === 'raylet-stop' ? (f.contAfterMs ? ` cont+${(f.contAfterMs / 1000).toFixed(1)}s` : ' no-cont') : ''}`).join(', ')}`,
  );

function smallSpec(checkpointDir: string, archiveDir: string, name: string): ExperimentSpec {
  const spec = h.spec(STEPS);
  spec.name = name;
  spec.trainer.saveFreq = SAVE_FREQ;
  spec.storage.checkpointDir = checkpointDir;
  spec.storage.archiveDir = archiveDir;
  return spec;
}

async function runOne(plan: RunPlan): Promise<RunReport> {
  const started = Date.now();
  const id = `soak-${seed}-${plan.index}`;
  const diskFull = plan.faults.some((f) => f.kind === 'disk-full');
  const volume = join(h.dir, `vol-${plan.index}`);
  if (diskFull) {
    await mountTmpfs(volume, 256);
    volumes.push(volume);
  }
  // Only the checkpoints go on the volume that fills: the archive (manifests) stays writable.
  const storage = join(h.storage, `run-${plan.index}`);
  const spec = smallSpec(
    diskFull ? volume : join(storage, 'checkpoints'),
    join(storage, 'archive'),
    `soak-${plan.index}`,
  );
  let handle: WorkflowHandle;
  let targetPrefix: string;
  let ckptDir: string;
  if (plan.kind === 'campaign') {
    handle = await h.startCampaign(id, spec, { maxAttempts: 6, maxAttemptsWithoutNewCheckpoint: 3 });
    targetPrefix = `${id}-a`;
    ckptDir = h.checkpointDir(spec, id);
  } else {
    const sweep = parseSweepMapping(
      {
        name: `soak-sweep-${plan.index}`,
        base: { ...spec, trainer: { ...spec.trainer, totalTrainingSteps: STEPS / 2 } },
        parameters: { grid: { 'trainer.seedTrain': [1, 2] } },
        concurrency: 1,
        failureBudget: 5,
      },
      'soak sweep',
    );
    handle = await h.client.workflow.start('sweep', {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [sweepInput(sweep)],
    });
    targetPrefix = childWorkflowId(id, 0, expandSweep(sweep)[0] ?? {});
    ckptDir = runCheckpointDir(sweep.base.storage, sweep.base.name, targetPrefix);
  }

  // Sampling: the run's progress every 500 ms, and every cluster name it ever had (for the leak check).
  const samples: Sample[] = [];
  const seenClusters = new Set<string>();
  let closed = false;
  const sampler = (async () => {
    while (!closed) {
      const s: Sample = { t: Date.now(), attempt: 0, step: 0, phase: '', closed: false };
      try {
        if (plan.kind === 'campaign') {
          const p = await handle.query<CampaignProgress>('progress');
          Object.assign(s, { attempt: p.attempt, step: p.step, phase: p.phase, ckpt: p.lastCheckpointStep });
        } else {
          const child = h.client.workflow.getHandle(targetPrefix);
          s.step = await child.query<number>('lastStep');
          s.closed = (await child.describe()).status.name !== 'RUNNING';
          s.phase = s.closed ? 'closed' : 'running';
        }
        samples.push(s);
      } catch {
        // a worker or server down, or the child not started yet
      }
      for (const c of await clustersOwnedBy(h.runRoot, id)) seenClusters.add(c.name);
      await sleep(500);
    }
  })();
  const lastCheckpoint = () =>
    (samples.at(-1) as (Sample & { ckpt?: number }) | undefined)?.ckpt ??
    Math.floor((samples.at(-1)?.step ?? 0) / SAVE_FREQ) * SAVE_FREQ;

  const before = new Map<number, string>();
  const remember = async () => {
    for (const [step, sha] of await completedCheckpointHashes(ckptDir).catch(() => new Map<number, string>()))
      if (!before.has(step)) before.set(step, sha);
  };

  const fired: Fired[] = [];
  const notFired: string[] = [];
  let closedAt = 0;
  const done = outcomeOf(handle).finally(() => {
    closed = true;
    closedAt = Date.now();
  });

  async function target(): Promise<LocalClusterView | undefined> {
    const deadline = Date.now() + 60_000;
    while (!closed && Date.now() < deadline) {
      const all = await clustersOwnedBy(h.runRoot, targetPrefix);
      const newest = all.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1);
      if (newest && newest.workerPgids.length > 0) return newest;
      await sleep(500);
    }
    return undefined;
  }

  async function inject(f: PlannedFault): Promise<void> {
    if (f.trigger === 'training') {
      while (!closed && lastCheckpoint() < SAVE_FREQ) await sleep(300);
    }
    // The 24 steps train in ~10 s here: a fill later than 1 s after the first save lands after the
    // last one (seed 2026's two disk-full faults did not fire), so it is not delayed further.
    await sleep(f.kind === 'disk-full' ? Math.min(f.delayMs, 1000) : f.delayMs);
    if (closed) return void notFired.push(`${f.kind} (run over)`);
    await remember();
    const last = samples.at(-1);
    const record = (detail: string) =>
      fired.push({
        kind: f.kind,
        at: Date.now(),
        step: last?.step ?? 0,
        attempt: last?.attempt ?? 0,
        detail,
        ...(f.contAfterMs !== undefined ? { contAfterMs: f.contAfterMs } : {}),
        afterTraining: plan.kind === 'sweep' && (last?.step ?? 0) >= STEPS / 2,
      });
    switch (f.kind) {
      case 'worker-kill':
        return exclusive(async () => {
          record('SIGKILL of the worker process, restarted after 2 s');
          await h.killWorker();
          await sleep(2000);
          await h.startWorker();
        });
      case 'server-restart':
        return exclusive(async () => {
          record('Temporal dev server stopped, started again after 3 s (same db file)');
          await h.stopServer();
          await sleep(3000);
          await h.startServer();
        });
      case 'raylet-kill':
      case 'head-kill':
      case 'driver-kill':
      case 'raylet-stop': {
        const c = await target();
        if (!c) return void notFired.push(`${f.kind} (no cluster)`);
        if (f.kind === 'head-kill') {
          record(`SIGKILL of head process group ${c.headPgid}`);
          signal(-c.headPgid, 'SIGKILL');
          return;
        }
        if (f.kind === 'driver-kill') {
          let pids: number[] = [];
          for (let i = 0; i < 60 && !closed && pids.length === 0; i++) {
            pids = await trainerDrivers(c.name);
            if (pids.length === 0) await sleep(500);
          }
          if (pids.length === 0) return void notFired.push(`${f.kind} (no driver)`);
          record(`SIGKILL of trainer driver ${pids.join(',')}`);
          for (const pid of pids) signal(pid, 'SIGKILL');
          return;
        }
        const node = c.workerPgids[0] as number;
        const raylet = await rayletOf(c.name, node);
        if (!raylet) return void notFired.push(`${f.kind} (no raylet)`);
        if (f.kind === 'raylet-kill') {
          record(`SIGKILL of worker raylet ${raylet}`);
          signal(raylet, 'SIGKILL');
          return;
        }
        record(
          `SIGSTOP of worker raylet ${raylet}${f.contAfterMs ? `, SIGCONT after ${f.contAfterMs} ms` : ', never continued'}`,
        );
        signal(raylet, 'SIGSTOP');
        if (f.contAfterMs) {
          await sleep(f.contAfterMs);
          signal(raylet, 'SIGCONT');
        }
        return;
      }
      case 'disk-full': {
        // A volume filled after the last save fails nothing: not counted as fired.
        if (lastCheckpoint() >= STEPS) return void notFired.push(`${f.kind} (after the last checkpoint)`);
        const bytes = await fillVolume(volume);
        record(`checkpoint volume filled (${(bytes / 1e6).toFixed(0)} MB filler)`);
        return;
      }
      case 'cancel':
        record('cancel');
        await handle.cancel();
        return;
      case 'terminate':
        record('terminate');
        await handle.terminate('soak: terminate fault');
        return;
      case 'pause-resume': {
        record('pause, then resume 2 s after it paused');
        await handle.signal('pause');
        while (!closed && samples.at(-1)?.phase !== 'paused') await sleep(300);
        if (closed) return;
        await sleep(2000);
        await handle.signal('resume');
        return;
      }
    }
  }

  await Promise.all(
    plan.faults.map((f) => inject(f).catch((e: Error) => notFired.push(`${f.kind} (${e.message})`))),
  );
  const { result, error } = await done;
  await sampler;

  // Outcome, as Temporal and the result say it.
  const status = (await handle.describe()).status.name;
  let outcome: string;
  let reason = '';
  if (status === 'TERMINATED') outcome = 'terminated';
  else if (status === 'CANCELLED') outcome = 'cancelled';
  else if (plan.kind === 'campaign') {
    outcome = result?.outcome ?? 'failed';
    reason = result?.reason ?? (error ? String(error).slice(0, 120) : '');
    if (result?.attempts.length)
      reason += ` [attempts: ${result.attempts.map((a) => a.ended?.type ?? a.outcome).join(', ')}]`;
  } else {
    const r = (await handle.result().catch(() => undefined)) as SweepResult | undefined;
    outcome = r ? `completed ${r.succeeded} ok ${r.failed} failed` : `failed`;
    reason =
      r?.ranked
        .map((x) => `#${x.index} ${x.outcome}${x.error ? `: ${x.error.slice(0, 80)}` : ''}`)
        .join('; ') ?? '';
  }
  if (outcome === 'terminated') {
    // What in-workflow teardown cannot do after a terminate, the reaper does.
    const report = await h.client.workflow.execute('reaper', {
      taskQueue: h.taskQueue,
      workflowId: `${id}-reaper`,
      args: [{ graceSeconds: 0 }],
    });
    reason = `reaper: ${JSON.stringify((report as { entries: { cluster: string; action: string }[] }).entries.filter((e) => e.cluster).map((e) => e.action))}`;
  }

  // Leaks and checkpoints. A terminated sweep's children tear down on their own after it closed
  // (parent close policy: request cancel): give them 90 s, and the reaper a second pass at 30 s.
  const clustersAtClose = (await clustersOwnedBy(h.runRoot, id)).length;
  const cleanupStarted = Date.now();
  let clustersLeft = clustersAtClose;
  for (let second = 1; clustersLeft > 0 && second <= 90; second++) {
    await sleep(1000);
    if (second === 30 && outcome === 'terminated')
      await h.client.workflow.execute('reaper', {
        taskQueue: h.taskQueue,
        workflowId: `${id}-reaper-2`,
        args: [{ graceSeconds: 0 }],
      });
    clustersLeft = (await clustersOwnedBy(h.runRoot, id)).length;
  }
  if (clustersAtClose > 0)
    reason += ` [clusters at close ${clustersAtClose}, ${clustersLeft} after ${((Date.now() - cleanupStarted) / 1000).toFixed(0)} s]`;
  let rayLeft = 0;
  for (const name of seenClusters) rayLeft += (await clusterProcesses(name)).length;
  const after = await completedCheckpointHashes(ckptDir).catch(() => new Map<number, string>());
  const lost = [...before.keys()].filter((s) => !after.has(s));
  const changed = [...before.entries()]
    .filter(([s, sha]) => after.has(s) && after.get(s) !== sha)
    .map(([s]) => s);
  const stepsLost = (await restartsInMetrics(ckptDir)).map((r) => r.lost);
  if (diskFull) await unmount(volume);

  // Detection and recovery from the samples.
  for (const f of fired) {
    const afterFault = samples.filter((s) => s.t >= f.at);
    const detectedBy = (s: Sample) =>
      plan.kind === 'campaign'
        ? s.attempt > f.attempt || (f.kind === 'pause-resume' && s.phase === 'paused') || s.phase === 'done'
        : s.closed;
    // A worker kill or server restart is absorbed, not detected: only its recovery is timed. A sweep
    // child's end is a detection only where the rule expects it to fail.
    const absorbed =
      ['worker-kill', 'server-restart'].includes(f.kind) ||
      (plan.kind === 'sweep' && expectedOutcome('sweep', [f]) === 'completed 2 ok 0 failed');
    const detected = absorbed ? undefined : afterFault.find(detectedBy);
    if (detected) f.detectedMs = detected.t - f.at;
    const recovered = afterFault.find(
      (s) => s.t >= (detected?.t ?? f.at) && s.step > f.step && s.phase !== 'paused',
    );
    if (recovered && !['cancel', 'terminate', 'disk-full'].includes(f.kind))
      f.recoveredMs = recovered.t - f.at;
  }
  // Faults that end the run (or an attempt that is the last): detected when the run closed, if not before.
  for (const f of fired)
    if (
      f.detectedMs === undefined &&
      ['cancel', 'terminate', 'disk-full', 'raylet-kill', 'head-kill', 'driver-kill'].includes(f.kind)
    )
      f.detectedMs = closedAt - f.at;

  return {
    plan,
    id,
    outcome,
    expected: expectedOutcome(plan.kind, fired),
    reason,
    fired,
    notFired,
    clustersLeft,
    rayLeft,
    lost,
    changed,
    stepsLost,
    wallS: (Date.now() - started) / 1000,
  };
}

const reports: RunReport[] = [];
let startedRuns = 0;
const started = Date.now();
try {
  const queue = [...planned];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let p = queue.shift(); p && Date.now() < stopAt; p = queue.shift()) {
        startedRuns++;
        const r = await runOne(p).catch((e: Error) => {
          console.log(`  run #${p.index} harness error: ${e.stack}`);
          return undefined;
        });
        if (!r) continue;
        reports.push(r);
        console.log(
          `  run #${r.plan.index} ${r.plan.kind} ${r.wallS.toFixed(0)} s: ${r.outcome} (expected ${r.expected}${r.outcome === r.expected ? ', ok' : ', MISMATCH'}); faults ${r.fired.map((f) => `${f.kind} at step ${f.step}${f.detectedMs !== undefined ? ` det ${(f.detectedMs / 1000).toFixed(1)}s` : ''}${f.recoveredMs !== undefined ? ` rec ${(f.recoveredMs / 1000).toFixed(1)}s` : ''}`).join(', ') || 'none'}${r.notFired.length ? `; not fired: ${r.notFired.join(', ')}` : ''}; ${r.fired.map((f) => f.detail).join('; ')}; left ${r.clustersLeft} clusters ${r.rayLeft} Ray procs; ckpt lost [${r.lost}] changed [${r.changed}]; steps lost ${JSON.stringify(r.stepsLost)}; ${r.reason}`,
        );
      }
    }),
  );
} finally {
  await h.close().catch(() => undefined);
  for (const v of volumes) await unmount(v);
}

const pct = (xs: number[], q: number) => {
  if (xs.length === 0) return '-';
  const s = [...xs].sort((a, b) => a - b);
  return (s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! / 1000).toFixed(1);
};
const det = reports.flatMap((r) =>
  r.fired.flatMap((f) => (f.detectedMs === undefined ? [] : [f.detectedMs])),
);
const rec = reports.flatMap((r) =>
  r.fired.flatMap((f) => (f.recoveredMs === undefined ? [] : [f.recoveredMs])),
);
const leftover = await rayProcesses();
const sorted = [...reports].sort((a, b) => a.plan.index - b.plan.index);
console.log(
  `\nsoak table (seed ${seed}; ${startedRuns} of ${runs} planned runs started; replay: npx tsx bench/soak.ts --runs ${startedRuns} --seed ${seed} --concurrency ${concurrency})`,
);
console.log(
  '| run | kind | faults fired | outcome | expected | match | clusters left | Ray procs left | ckpt lost/changed | steps lost | det s | rec s |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of sorted)
  console.log(
    `| ${r.plan.index} | ${r.plan.kind} | ${r.fired.map((f) => f.kind).join(' + ') || '-'} | ${r.outcome} | ${r.expected} | ${r.outcome === r.expected ? 'yes' : 'NO'} | ${r.clustersLeft} | ${r.rayLeft} | ${r.lost.length}/${r.changed.length} | ${r.stepsLost.join(',') || '-'} | ${r.fired.map((f) => (f.detectedMs === undefined ? '-' : (f.detectedMs / 1000).toFixed(1))).join(',')} | ${r.fired.map((f) => (f.recoveredMs === undefined ? '-' : (f.recoveredMs / 1000).toFixed(1))).join(',')} |`,
  );
const sum = (f: (r: RunReport) => number) => reports.reduce((a, r) => a + f(r), 0);
const allLost = reports.flatMap((r) => r.stepsLost);
console.log(
  `\ntotal: ${reports.length}/${runs} runs reported, ${reports.filter((r) => r.outcome === r.expected).length} outcomes as expected; faults fired ${sum((r) => r.fired.length)}, not fired ${sum((r) => r.notFired.length)}; clusters left ${sum((r) => r.clustersLeft)}; Ray processes left ${sum((r) => r.rayLeft)} (machine-wide after the soak: ${leftover.length}); checkpoints lost ${sum((r) => r.lost.length)}, changed ${sum((r) => r.changed.length)}; steps lost per restart max ${allLost.length ? Math.max(...allLost) : 0} over ${allLost.length} restarts (save_freq ${SAVE_FREQ}); detection p50 ${pct(det, 0.5)} s p95 ${pct(det, 0.95)} s max ${pct(det, 1)} s (n=${det.length}); recovery p50 ${pct(rec, 0.5)} s p95 ${pct(rec, 0.95)} s max ${pct(rec, 1)} s (n=${rec.length}); wall ${((Date.now() - started) / 60000).toFixed(1)} min; seed ${seed}`,
);
const seconds = (xs: number[], q: number) => (pct(xs, q) === '-' ? null : Number(pct(xs, q)));
writeResults('soak', measuredCode, {
  seed,
  runsPlanned: runs,
  runsStarted: startedRuns,
  concurrency,
  runsReported: reports.length,
  outcomesAsExpected: reports.filter((r) => r.outcome === r.expected).length,
  faultsFired: sum((r) => r.fired.length),
  faultsNotFired: sum((r) => r.notFired.length),
  clustersLeft: sum((r) => r.clustersLeft),
  rayProcessesLeft: sum((r) => r.rayLeft),
  rayProcessesLeftMachineWide: leftover.length,
  checkpointsLost: sum((r) => r.lost.length),
  checkpointsChanged: sum((r) => r.changed.length),
  saveFreq: SAVE_FREQ,
  stepsLostPerRestartMax: allLost.length ? Math.max(...allLost) : 0,
  restarts: allLost.length,
  detectionSeconds: { p50: seconds(det, 0.5), p95: seconds(det, 0.95), max: seconds(det, 1), n: det.length },
  recoverySeconds: { p50: seconds(rec, 0.5), p95: seconds(rec, 0.95), max: seconds(rec, 1), n: rec.length },
  wallMinutes: (Date.now() - started) / 60000,
  runs: sorted.map((r) => ({
    run: r.plan.index,
    kind: r.plan.kind,
    faultsFired: r.fired.map((f) => f.kind),
    outcome: r.outcome,
    expected: r.expected,
    clustersLeft: r.clustersLeft,
    rayLeft: r.rayLeft,
    checkpointsLost: r.lost.length,
    checkpointsChanged: r.changed.length,
    stepsLost: r.stepsLost,
  })),
});
process.exit(0);
