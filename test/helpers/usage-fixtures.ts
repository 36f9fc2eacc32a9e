/** Experiment manifests for the usage tests, through report-fixtures' testManifest (so they parse). */
import { sumGpuUsage } from '../../src/domain/usage/gpu-usage.js';
import type { Manifest } from '../../src/domain/run/manifest.js';
import { testManifest } from './report-fixtures.js';

// testManifest's runs start at 2026-12-01T10:00Z plus `shift` seconds; 2 workers of 1 GPU each.
const HOUR = 3600;
const owned = (m: Manifest, owner: string, team: string): Manifest => ({
  ...m,
  resolvedSpec: { ...m.resolvedSpec, owner, team },
});
/** An experiment manifest of `owner` in `team`, `shift` seconds after 2026-12-01T10:00Z, 2 s per step. */
export const run = (id: string, owner: string, team: string, shift: number, steps = 500) =>
  owned(testManifest(id, '/tmp/usage-test', { shift, steps }), owner, team);

/** Several teams and owners, a campaign of two attempts, a sweep of three children; one run crosses midnight UTC. */
export function usageWorld() {
  const standalone = [
    run('exp-ana-1', 'ana', 'vision', 0),
    run('exp-bo-1', 'bo', 'vision', 2 * HOUR),
    run('exp-cy-1', 'cy', 'nlp', 14 * HOUR - 300, 1000), // 23:55 Dec 1 → past midnight
  ];
  const attempts = [run('camp-1-a1', 'cy', 'nlp', HOUR), run('camp-1-a2', 'cy', 'nlp', 26 * HOUR)];
  const children = [0, 1, 2].map((i) => run(`sweep-1-${i}`, 'dee', 'rl', 3 * HOUR + i * 600, 200));
  return {
    standalone,
    attempts,
    children,
    campaign: sumGpuUsage(attempts.map((m) => m.gpuUsage)),
    sweep: sumGpuUsage(children.map((m) => m.gpuUsage)),
    all: [...standalone, ...attempts, ...children],
  };
}
