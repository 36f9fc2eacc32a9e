/**
 * Benchmark: wall time of the validate activity (the validation stage) with each runner, on a real
 * local Ray cluster (head + 2 workers x 1 logical GPU) and the real payload, from one 4-step
 * checkpoint: `payload` (python -m ragen_toy.validate) and `trainer` (the training entrypoint with
 * trainer.val_only=True). Runs alternate between the runners; prints every run, median and min.
 * Run it under the machine's Ray lock: flock /tmp/ray-test.lock npx tsx bench/validation-runners.ts [runs] [episodes]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityDeps } from '../src/activities/common/deps.js';
import { createTrain } from '../src/activities/train/train.js';
import { createValidate } from '../src/activities/validate/validate.js';
import { LocalBackend } from '../src/backends/local/local-backend.js';
import { RayDashboardClient } from '../src/backends/ray/dashboard-client.js';
import { loadConfig } from '../src/config/config.js';
import type { ClusterHandle } from '../src/domain/cluster/cluster.js';
import type { ValidationResult } from '../src/domain/run/results.js';
import type { ValidationRunner } from '../src/domain/validate/validation-runner.js';
import { testSpec } from '../test/helpers/specs.js';

const runs = Number(process.argv[2] ?? 3);
const episodes = Number(process.argv[3] ?? 128);
const dir = await mkdtemp(join(tmpdir(), 'bench-validation-'));
const config = loadConfig();
const backend = new LocalBackend({
  runRoot: `/tmp/ro-bv-${process.pid}`,
  rayBin: config.rayBin,
  python: config.python,
  nodeIp: config.RAGEN_NODE_IP,
});
const deps: ActivityDeps = {
  backends: { local: backend },
  rayHead: (url, token) => new RayDashboardClient(url, token),
  reportProgress: async () => undefined,
  workflowStatus: async () => undefined,
  pollIntervalMs: 250,
};
const base = testSpec({}, dir);
const spec = {
  ...base,
  trainer: {
    ...base.trainer,
    totalTrainingSteps: 4,
    saveFreq: 2,
    overrides: { 'es_manager.val.env_groups': 8 },
  },
  validation: { ...base.validation, episodes },
};
let handle: ClusterHandle | undefined;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
try {
  handle = await backend.createCluster({
    name: 'bench-val-a0',
    spec,
    owner: { experiment: spec.name, workflowId: 'bench-validation', runId: 'r', attempt: 0 },
  });
  const checkpointDir = join(dir, 'checkpoints');
  await new MockActivityEnvironment().run(createTrain(deps), {
    spec,
    handle,
    checkpointDir,
    resume: { mode: 'disable' as const },
  });
  const times: Record<ValidationRunner, number[]> = { payload: [], trainer: [] };
  for (let i = 0; i < runs; i++) {
    for (const runner of ['payload', 'trainer'] as const) {
      const input = {
        spec: { ...spec, validation: { ...spec.validation, runner } },
        handle: { ...handle, name: `${handle.name}-${runner}-${i}` },
        checkpointPath: `${checkpointDir}/global_step_4`,
        outPath: join(dir, `${runner}-${i}`, 'validation.json'),
      };
      const started = performance.now();
      const result: ValidationResult = await new MockActivityEnvironment().run(createValidate(deps), input);
      const seconds = (performance.now() - started) / 1000;
      times[runner].push(seconds);
      console.log(
        `run ${i + 1} ${runner.padEnd(7)} ${seconds.toFixed(2)} s  success_rate ${result.success_rate.toFixed(4)} (${result.episodes} episodes, seeds ${result.seeds?.first}..${result.seeds?.last})`,
      );
    }
  }
  for (const runner of ['payload', 'trainer'] as const) {
    console.log(
      `validate stage, ${runner} runner, ${episodes} episodes: median ${median(times[runner]).toFixed(2)} s, min ${Math.min(...times[runner]).toFixed(2)} s over ${runs} runs`,
    );
  }
} finally {
  if (handle) await backend.deleteCluster(handle);
  await rm(dir, { recursive: true, force: true });
  await rm(`/tmp/ro-bv-${process.pid}`, { recursive: true, force: true });
}
