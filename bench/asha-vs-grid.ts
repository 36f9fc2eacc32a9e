/**
 * The same 16-configuration sweep on the local backend (real Ray, real payload), once as a plain
 * grid and once with ASHA; prints the GPU-seconds each used (from sweep.json's gpuUsage), the best
 * configuration and objective each found, and the spread of the objective across the grid's 16.
 * The payload runs harder Sokoban than the example (8x8 rooms, 3 boxes, 12 actions per episode) so
 * the configurations really differ (with 7x7, 2 boxes, 6 actions and 12 steps 13 of the 16 ended
 * at the same success). ASHA saves training steps, never a child's fixed cost (cluster start, join,
 * all-reduce, validation, teardown: about 40 s each here), so the sweep is only worth stopping
 * early when training dominates a child's time, as on real GPU runs: the default is 128 steps of
 * 512 episodes each. Both sweeps run against one dev server the bench starts, so it can also count
 * each child's history events afterwards. Long (32 children, about 30 min on 2 cores); run it by
 * hand, under the shared lock:
 *   npx tsx bench/asha-vs-grid.ts [totalSteps=128] [concurrency=2] [trainEnvGroups=32]
 *     [gracePeriod=4] [reductionFactor=4] [ashaMetric=episode_reward] [space=random|grid]
 * (`8 2 8 2 2 success grid` is the short first version, where fixed costs dominate.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/cli/dev-server.js';
import { loadConfig } from '../src/config/config.js';
import { SweepManifestSchema, type SweepManifest } from '../src/domain/sweep/sweep.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = ['bench/asha-vs-grid.ts', 'src', 'payload/ragen_toy'];

const numberArg = (i: number, fallback: number) => Number(process.argv[2 + i] ?? fallback);
const totalSteps = numberArg(0, 128);
const concurrency = numberArg(1, 2);
const trainEnvGroups = numberArg(2, 32);
const gracePeriod = numberArg(3, 4);
const reductionFactor = numberArg(4, 4);
// Success ties often (64 levels): a tie is never ahead at a rung, so tied children all continue;
// the episode reward orders them.
const ashaMetric = `val-env/CoordSokoban/${process.argv[7] ?? 'episode_reward'}`;
const root = mkdtempSync(join(tmpdir(), 'asha-bench-'));

const base = {
  name: 'asha-bench',
  backend: 'local',
  rayVersion: '2.60.0',
  cluster: { workerGroups: [{ name: 'gpu-workers', replicas: 1, gpusPerWorker: 1, cpusPerWorker: 1 }] },
  trainer: {
    nnodes: 1,
    nGpusPerNode: 1,
    totalTrainingSteps: totalSteps,
    saveFreq: 4 * gracePeriod,
    testFreq: gracePeriod,
    overrides: {
      'env.dim_x': 8,
      'env.dim_y': 8,
      'env.num_boxes': 3,
      'env.max_actions_per_traj': 12,
      'es_manager.train.env_groups': trainEnvGroups,
      // In-loop validations on 64 levels (the default 128 doubles their time here).
      'es_manager.val.env_groups': 64,
    },
  },
  storage: { checkpointDir: join(root, 'checkpoints'), archiveDir: join(root, 'archive') },
  // The trainer validates with the training overrides (the same rooms), from the final checkpoint.
  validation: { episodes: 64, seed: 123, runner: 'trainer' },
  deadlines: { joinSeconds: 120, runSeconds: 3600, noProgressSeconds: 300, firstStepSeconds: 600 },
};
// The 16 configurations: a 4 x 4 grid, or 16 seeded random samples (the usual companion of ASHA:
// their order comes from the PRNG, not from whoever wrote the list; learning rates from 1e-5,
// which never converges in 128 steps, to 1e-3).
const space = process.argv[8] ?? 'random';
const parameters =
  space === 'grid'
    ? {
        grid: {
          'algorithm.lr': [0.005, 0.02, 0.1, 0.4],
          'algorithm.epsilon_decay_steps': [2, 4, 8, 16],
        },
      }
    : {
        random: {
          seed: 7,
          count: 16,
          params: {
            'algorithm.lr': { logUniform: [0.00001, 0.001] },
            'algorithm.epsilon_decay_steps': { intRange: [2, 16] },
          },
        },
      };

// One dev server for both sweeps (a free port from the pid): the CLI finds it and starts none.
const port = 20000 + (process.pid % 20000);
const address = `127.0.0.1:${port}`;
const server = await startDevServer({
  temporalBin: loadConfig().temporalBin,
  dbFile: join(root, 'temporal.db'),
  port,
  uiPort: port + 1,
  logFile: join(root, 'temporal.log'),
});

function runSweep(name: string, scheduler?: object): { manifest: SweepManifest; wallS: number } {
  const file = join(root, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ name, base, parameters, concurrency, ...(scheduler ? { scheduler } : {}) }),
  );
  const started = Date.now();
  const cli = spawnSync('npx', ['tsx', resolve('src/cli/main.ts'), 'sweep', '--embedded', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    env: { ...process.env, TEMPORAL_ADDRESS: address },
  });
  const wallS = (Date.now() - started) / 1000;
  const path = /\S+\/sweep\.json/.exec(cli.stdout ?? '')?.[0];
  if (!path)
    throw new Error(`${name}: no sweep.json in the CLI's output (exit ${cli.status})\n${cli.stdout}`);
  return { manifest: SweepManifestSchema.parse(JSON.parse(readFileSync(path, 'utf8'))), wallS };
}

const fmt = (m: SweepManifest) => {
  const best = m.children.find((c) => c.rank === 1);
  return `GPU-seconds ${m.gpuUsage?.allocatedSeconds.toFixed(0)} (busy ${m.gpuUsage?.busySeconds.toFixed(0)}), best ${best?.successRate} at ${JSON.stringify(best?.params)}, pruned ${m.counts.pruned ?? 0}`;
};

/** History events of each child of a sweep (the visibility store finds them by RagenSweepId). */
async function childEvents(client: Client, sweepId: string): Promise<number[]> {
  const counts: number[] = [];
  for await (const w of client.workflow.list({
    query: `RagenSweepId = '${sweepId}' AND RagenKind = 'experiment'`,
  }))
    counts.push(w.historyLength);
  return counts.sort((a, b) => a - b);
}

try {
  const plain = runSweep('grid');
  const asha = runSweep('asha', {
    type: 'asha',
    metric: ashaMetric,
    gracePeriod,
    reductionFactor,
  });
  const byIndex = [...plain.manifest.children].sort((a, b) => a.index - b.index);
  console.log('grid, each configuration: final objective (in-loop validations)');
  for (const c of byIndex)
    console.log(
      `  ${JSON.stringify(c.params)}: ${c.successRate} (${c.outcome}, GPU-s ${c.gpuSeconds?.toFixed(0)})`,
    );
  const values = byIndex.map((c) => c.successRate ?? NaN).sort((a, b) => a - b);
  console.log(`grid: ${fmt(plain.manifest)}; wall ${plain.wallS.toFixed(0)} s`);
  console.log(`asha: ${fmt(asha.manifest)}; wall ${asha.wallS.toFixed(0)} s`);
  for (const c of [...asha.manifest.children].sort((a, b) => a.index - b.index))
    console.log(
      `  asha ${JSON.stringify(c.params)}: ${c.outcome}${c.pruned ? ` at rung ${c.pruned.rung}` : ''} ${c.successRate ?? ''} last ${JSON.stringify(c.lastIntermediate)}`,
    );
  console.log(
    `objective spread over the grid's ${values.length}: min ${values[0]}, median ${values[values.length >> 1]}, max ${values.at(-1)}, distinct ${new Set(values).size}`,
  );
  const ratio =
    (asha.manifest.gpuUsage?.allocatedSeconds ?? 0) / (plain.manifest.gpuUsage?.allocatedSeconds ?? 1);
  const gridBest = values.at(-1);
  const tiedBest = byIndex.filter((c) => c.successRate === gridBest).map((c) => JSON.stringify(c.params));
  const ashaBest = asha.manifest.children.find((c) => c.rank === 1);
  console.log(`grid's best value ${gridBest} is shared by ${tiedBest.length}: ${tiedBest.join(' ')}`);
  console.log(
    `asha / grid GPU-seconds: ${(100 * ratio).toFixed(0)}%; asha's best ${ashaBest?.successRate} at ${JSON.stringify(ashaBest?.params)}: ` +
      `same value as the grid's best: ${ashaBest?.successRate === gridBest}; among the grid's best configurations: ${tiedBest.includes(JSON.stringify(ashaBest?.params))}`,
  );
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const historyEventsPerChild: Record<string, number[]> = {};
  for (const [name, m] of [
    ['grid', plain.manifest],
    ['asha', asha.manifest],
  ] as const) {
    const events = await childEvents(client, m.temporal.workflowId);
    historyEventsPerChild[name] = events;
    console.log(
      `history events per child (${name}, intermediate reporting ${name === 'asha' ? 'on' : 'off'}): min ${events[0]}, median ${events[events.length >> 1]}, max ${events.at(-1)} over ${events.length}`,
    );
  }
  await connection.close();
  const side = (m: SweepManifest, wallS: number) => ({
    wallSeconds: wallS,
    allocatedGpuSeconds: m.gpuUsage?.allocatedSeconds,
    busyGpuSeconds: m.gpuUsage?.busySeconds,
    pruned: m.counts.pruned ?? 0,
    best: m.children.find((c) => c.rank === 1),
    children: [...m.children].sort((a, b) => a.index - b.index),
  });
  writeResults(`asha-vs-grid-${space}`, measuredCode, {
    settings: { totalSteps, concurrency, trainEnvGroups, gracePeriod, reductionFactor, ashaMetric, space },
    withoutAsha: side(plain.manifest, plain.wallS),
    asha: side(asha.manifest, asha.wallS),
    ashaOverGridGpuSeconds: ratio,
    gridBestValue: gridBest,
    gridBestSharedBy: tiedBest,
    historyEventsPerChild,
  });
} finally {
  await server.stop();
}
