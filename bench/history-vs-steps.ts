/**
 * Benchmark (issue 16 item 4): an experiment's history event count at 200 and 2,000 training steps
 * on the local backend (real dev server, real Ray, the ragen_toy payload with tiny rollouts so 2,000
 * steps take minutes). Goal: the count does not grow with the step count. The live step travels in
 * the train activity's heartbeat; checkpoints reach the history at most every
 * RAGEN_CHECKPOINT_SIGNAL_SECONDS (600 s; the last row runs with 0, every checkpoint, to show what
 * that bound buys). Run under the shared lock (it starts Ray and a Temporal dev server):
 *   flock /tmp/ray-test.lock npx tsx bench/history-vs-steps.ts [steps,...] (default 200,2000)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { createActivities } from '../src/activities/index.js';
import { loadConfig } from '../src/config/config.js';
import type { ExperimentResult } from '../src/domain/run/experiment-input.js';
import { activityDeps } from '../src/worker/worker.js';
import type { experiment } from '../src/workflows/experiment.js';
import { testInput, testSpec } from '../test/helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../test/helpers/temporal.js';

const SAVE_FREQ = 100;
const stepCounts = (process.argv[2] ?? '200,2000').split(',').map(Number);
const runs = [
  ...stepCounts.map((steps) => ({ steps, checkpointSignalSeconds: 600 })),
  { steps: Math.max(...stepCounts), checkpointSignalSeconds: 0 },
];

type Event = temporal.api.history.v1.IHistoryEvent;
const count = (events: Event[], key: keyof Event) => events.filter((e) => e[key]).length;

const env = await devServerEnv();
const storage = await mkdtemp(join(tmpdir(), 'ragen-hist-'));
const runRoot = `/tmp/ro-hs-${process.pid}`;
const rows: string[] = [];
try {
  for (const { steps, checkpointSignalSeconds } of runs) {
    const config = {
      ...loadConfig(),
      RAGEN_RUN_ROOT: runRoot,
      RAGEN_CHECKPOINT_SIGNAL_SECONDS: checkpointSignalSeconds,
    };
    const taskQueue = uniqueId('bench-hs');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(activityDeps(config, env.client)),
      maxHeartbeatThrottleInterval: '3 seconds',
    });
    const spec = testSpec({}, join(storage, `s${steps}-${checkpointSignalSeconds}`));
    spec.trainer.totalTrainingSteps = steps;
    spec.trainer.saveFreq = SAVE_FREQ;
    // Tiny rollouts, no validation inside the loop: steps of tens of milliseconds.
    spec.trainer.overrides = {
      'trainer.val_before_train': false,
      'trainer.test_freq': 0,
      'es_manager.train.env_groups': 1,
      'es_manager.train.group_size': 2,
      'es_manager.val.env_groups': 8,
    };
    spec.validation.episodes = 16;
    spec.deadlines = { joinSeconds: 120, runSeconds: 3600, noProgressSeconds: 300, firstStepSeconds: 600 };
    const started = Date.now();
    const handle = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue,
      workflowId: uniqueId(`bench-hs-${steps}`),
      args: [testInput(spec)],
    });
    const result: ExperimentResult = await worker.runUntil(handle.result());
    const seconds = (Date.now() - started) / 1000;
    if (result.outcome !== 'succeeded') throw new Error(`run of ${steps} steps: ${JSON.stringify(result)}`);
    const events = (await handle.fetchHistory()).events ?? [];
    const row = [
      String(steps).padStart(5),
      String(steps / SAVE_FREQ).padStart(11),
      String(checkpointSignalSeconds).padStart(18),
      String(events.length).padStart(7),
      String(count(events, 'workflowExecutionSignaledEventAttributes')).padStart(7),
      String(count(events, 'upsertWorkflowSearchAttributesEventAttributes')).padStart(7),
      String(count(events, 'activityTaskScheduledEventAttributes')).padStart(10),
      seconds.toFixed(0).padStart(7),
    ].join(' | ');
    rows.push(row);
    console.log(row);
  }
} finally {
  await env.teardown();
  await rm(storage, { recursive: true, force: true });
  await rm(runRoot, { recursive: true, force: true });
}
console.log('\nsteps | checkpoints | checkpoint signal s | events | signals | upserts | activities | wall s');
for (const row of rows) console.log(row);
