/**
 * The same 16-configuration sweep on the local backend (real Ray, real payload), once as a plain
 * grid and once with ASHA; prints the GPU-seconds each used (from sweep.json's gpuUsage), the best
 * configuration and objective each found, and the spread of the objective across the grid's 16.
 * The payload runs harder Sokoban than the example (7x7 rooms, 2 boxes, 6 actions per episode) so
 * the configurations really differ. Long: 32 children on this machine; run it by hand:
 *   npx tsx bench/asha-vs-grid.ts [totalSteps=12] [concurrency=2]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SweepManifestSchema, type SweepManifest } from '../src/domain/sweep.js';

const totalSteps = Number(process.argv[2] ?? 12);
const concurrency = Number(process.argv[3] ?? 2);
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
    saveFreq: 2,
    testFreq: 2,
    overrides: {
      'env.dim_x': 7,
      'env.dim_y': 7,
      'env.num_boxes': 2,
      'env.max_actions_per_traj': 6,
    },
  },
  storage: { checkpointDir: join(root, 'checkpoints'), archiveDir: join(root, 'archive') },
  // The trainer validates with the training overrides (the same rooms), from the final checkpoint.
  validation: { episodes: 64, seed: 123, runner: 'trainer' },
  deadlines: { joinSeconds: 120, runSeconds: 3600, noProgressSeconds: 300, firstStepSeconds: 600 },
};
const grid = {
  'algorithm.lr': [0.005, 0.02, 0.1, 0.4],
  'algorithm.epsilon_decay_steps': [2, 4, 8, 16],
};

function runSweep(name: string, scheduler?: object): { manifest: SweepManifest; wallS: number } {
  const file = join(root, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ name, base, parameters: { grid }, concurrency, ...(scheduler ? { scheduler } : {}) }),
  );
  const started = Date.now();
  const cli = spawnSync('npx', ['tsx', resolve('src/cli.ts'), 'sweep', '--embedded', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const wallS = (Date.now() - started) / 1000;
  const path = /\S+\/sweep\.json/.exec(cli.stdout ?? '')?.[0];
  if (!path)
    throw new Error(`${name}: no sweep.json in the CLI's output (exit ${cli.status})\n${cli.stdout}`);
  return { manifest: SweepManifestSchema.parse(JSON.parse(readFileSync(path, 'utf8'))), wallS };
}

const fmt = (m: SweepManifest) => {
  const best = m.children.find((c) => c.rank === 1);
  return `GPU-seconds ${m.gpuUsage?.allocatedSeconds.toFixed(0)} (busy ${m.gpuUsage?.busySeconds.toFixed(0)}), best ${best?.successRate} at ${JSON.stringify(best?.params)}, stopped early ${m.counts.stoppedEarly ?? 0}`;
};

const plain = runSweep('grid');
const asha = runSweep('asha', {
  type: 'asha',
  metric: 'val-env/CoordSokoban/success',
  gracePeriod: 2,
  reductionFactor: 2,
});
const values = plain.manifest.children.map((c) => c.successRate ?? NaN).sort((a, b) => a - b);
console.log(`grid: ${fmt(plain.manifest)}; wall ${plain.wallS.toFixed(0)} s`);
console.log(`asha: ${fmt(asha.manifest)}; wall ${asha.wallS.toFixed(0)} s`);
console.log(
  `objective spread over the grid's ${values.length}: min ${values[0]}, median ${values[values.length >> 1]}, max ${values.at(-1)}`,
);
const ratio =
  (asha.manifest.gpuUsage?.allocatedSeconds ?? 0) / (plain.manifest.gpuUsage?.allocatedSeconds ?? 1);
const same =
  JSON.stringify(asha.manifest.children.find((c) => c.rank === 1)?.params) ===
  JSON.stringify(plain.manifest.children.find((c) => c.rank === 1)?.params);
console.log(`asha / grid GPU-seconds: ${(100 * ratio).toFixed(0)}%; same best configuration: ${same}`);
