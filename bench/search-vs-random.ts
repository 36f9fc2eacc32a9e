/**
 * TPE vs random vs grid on the payload, the same budget (12 trials), 3 seeds each, in one run:
 * the best validation success each has reached against the GPU-seconds spent so far.
 *
 * The objective is the payload's trainer itself (ragen_toy's Trainer, the same training code the
 * children run), trained in one process without Ray (bench/search_objective.py): 108 real payload
 * children, each with a Ray cluster's fixed cost, do not fit this shared 2-core machine. So
 * "GPU-seconds" here are each trial's training wall-clock seconds x its 1 GPU, not the allocated
 * cluster time a real sweep counts. The grid and random parameter sets come from the sweep's own
 * expansion (src/domain/sweep/sweep-expand.ts); TPE asks and tells through the search worker's own
 * activity code (search/ragen_search/study.py) on a SQLite study, as in production.
 * The space: algorithm.lr (log-uniform) and algorithm.gamma (uniform), on harder Sokoban than the
 * example (8x8 rooms, 2 boxes, 12 actions), where both change the validation success.
 *   npx tsx bench/search-vs-random.ts [trials=12]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config/config.js';
import { expandSweep } from '../src/domain/sweep/sweep-expand.js';
import type { ParamSet } from '../src/domain/sweep/sweep.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/search-vs-random.ts',
  'bench/search_objective.py',
  'search/ragen_search',
  'src/domain/sweep/sweep-expand.ts',
  'payload/ragen_toy',
];

const trials = Number(process.argv[2] ?? 12);
const seeds = [0, 1, 2];
const space = {
  'algorithm.lr': { logUniform: [0.001, 1] },
  'algorithm.gamma': { uniform: [0.5, 0.99] },
} as const;
const base = {
  'trainer.total_training_steps': 8,
  'trainer.test_freq': 0,
  'trainer.save_freq': 0,
  'trainer.val_before_train': false,
  'trainer.logger': '[console]',
  'env.dim_x': 8,
  'env.dim_y': 8,
  'env.num_boxes': 2,
  'env.max_actions_per_traj': 12,
  'es_manager.train.env_groups': 4,
  'es_manager.val.env_groups': 48,
};
// A grid of the same budget: 4 x 3 when trials is 12.
const grid = {
  'algorithm.lr': [0.001, 0.01, 0.1, 1].slice(0, Math.max(1, Math.floor(trials / 3))),
  'algorithm.gamma': [0.5, 0.75, 0.99],
};
const randomSets = (seed: number): ParamSet[] =>
  expandSweep({
    parameters: { grid: {}, random: { seed, count: trials, params: space as never } },
  });

interface Trial {
  method: 'grid' | 'random' | 'tpe';
  seed: number;
  index: number;
  params: ParamSet;
  success: number;
  seconds: number;
  askMs?: number;
  tellMs?: number;
}

async function runTrials(): Promise<Trial[]> {
  const runs = seeds.flatMap((seed) => [
    { method: 'grid', seed, params: expandSweep({ parameters: { grid } }) },
    { method: 'random', seed, params: randomSets(seed) },
    { method: 'tpe', seed, params: null },
  ]);
  const root = mkdtempSync(join(tmpdir(), 'search-bench-'));
  const child = spawn(loadConfig().python, [resolve('bench/search_objective.py')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(`${JSON.stringify({ root, base, runs, tpe: { trials, space } })}\n`);
  const out: Trial[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    if (!line.startsWith('{"method"')) continue; // the trainer's own console lines
    const t = JSON.parse(line) as Trial;
    out.push(t);
    console.log(`${t.method} seed ${t.seed} #${t.index}: success ${t.success} in ${t.seconds.toFixed(1)} s`);
  }
  return out;
}

/** Best-so-far after each trial, with the GPU-seconds spent up to it. */
function curve(ts: Trial[]): { gpuSeconds: number; best: number }[] {
  let spent = 0;
  let best = -Infinity;
  return ts.map((t) => {
    spent += t.seconds; // 1 GPU per trial
    best = Math.max(best, t.success);
    return { gpuSeconds: Number(spent.toFixed(2)), best };
  });
}

const all = await runTrials();
const perSeed = seeds.map((seed) => {
  const of = (m: Trial['method']) => curve(all.filter((t) => t.method === m && t.seed === seed));
  const [g, r, p] = [of('grid'), of('random'), of('tpe')];
  const randomFinal = r.at(-1)!;
  const tpeReach = p.find((c) => c.best >= randomFinal.best);
  return {
    seed,
    grid: { finalBest: g.at(-1)!.best, gpuSeconds: g.at(-1)!.gpuSeconds },
    random: { finalBest: randomFinal.best, gpuSeconds: randomFinal.gpuSeconds },
    tpe: { finalBest: p.at(-1)!.best, gpuSeconds: p.at(-1)!.gpuSeconds },
    tpeGpuSecondsToRandomBest: tpeReach?.gpuSeconds ?? null,
    tpeShareOfRandomGpuSeconds: tpeReach
      ? Number((tpeReach.gpuSeconds / randomFinal.gpuSeconds).toFixed(3))
      : null,
    curves: { grid: g, random: r, tpe: p },
  };
});
const shares = perSeed.map((s) => s.tpeShareOfRandomGpuSeconds);
const latencies = all.filter((t) => t.method === 'tpe');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const summary = {
  objective:
    "the payload's trainer in one process, no Ray (bench/search_objective.py); GPU-seconds = training wall-clock seconds x 1 GPU per trial, not a sweep's allocated cluster time",
  trials,
  seeds,
  space,
  grid,
  base,
  goal: "TPE reaches random's final best in <= 60% of random's GPU-seconds",
  metInSeeds: shares.filter((s) => s !== null && s <= 0.6).length,
  tpeShareOfRandomGpuSeconds: shares,
  askMs: {
    median: median(latencies.map((t) => t.askMs ?? 0)),
    max: Math.max(...latencies.map((t) => t.askMs ?? 0)),
  },
  tellMs: {
    median: median(latencies.map((t) => t.tellMs ?? 0)),
    max: Math.max(...latencies.map((t) => t.tellMs ?? 0)),
  },
  perSeed,
  trialsRun: all,
};
for (const s of perSeed)
  console.log(
    `seed ${s.seed}: best grid ${s.grid.finalBest}, random ${s.random.finalBest} (${s.random.gpuSeconds} GPU-s), tpe ${s.tpe.finalBest}; tpe reached random's best at ${s.tpeGpuSecondsToRandomBest ?? 'never'} GPU-s (${s.tpeShareOfRandomGpuSeconds ?? '-'})`,
  );
console.log(`ask ${JSON.stringify(summary.askMs)} ms, tell ${JSON.stringify(summary.tellMs)} ms`);
writeResults('search-vs-random', measuredCode, summary);
