/**
 * Benchmark: what the MLflow tracking activity adds after archive, against a real `mlflow server`
 * (SQLite, local artifacts) on loopback: one experiment with a 1,000-step metrics series (4 keys
 * per step), its manifest written by the real archive activity. Prints the time per tracked run
 * (median of N fresh runs) and the REST calls each made.
 *   npx tsx bench/track-mlflow.ts [runs]
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createArchive } from '../src/activities/archive/archive.js';
import { createTrackMlflowRun } from '../src/activities/tracking/track-mlflow.js';
import type { MetricsSeries } from '../src/domain/train/metrics-series.js';
import { metricsSeriesPath } from '../src/domain/spec/paths.js';
import { startMlflowServer } from '../test/helpers/mlflow-server.js';
import { testInput, testSpec } from '../test/helpers/specs.js';

const runs = Number(process.argv[2] ?? 5);
const steps = 1000;
const server = await startMlflowServer();
try {
  const times: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < runs; i++) {
    const root = await mkdtemp(join(tmpdir(), 'bench-track-'));
    const spec = testSpec({ tracking: { mlflow: { uri: server.uri, experiment: 'bench' } } }, root);
    const workflowId = `bench-${process.pid}-${i}`;
    const { manifestPath } = await createArchive()({
      archiveDir: spec.storage.archiveDir,
      checkpoints: [],
      draft: {
        experiment: spec.name,
        temporal: { workflowId, runId: 'r', namespace: 'default', taskQueue: 'q' },
        provenance: testInput(spec).provenance,
        image: { verified: false, note: 'bench' },
        rayVersion: { declared: '2.60.0' },
        environment: { envTag: 'CoordSokoban', overrides: {} },
        seeds: { train: 10000, val: 123 },
        resolvedSpec: spec,
        entrypoint: ['python'],
        cluster: { backend: 'local', shape: { headCpus: 1, workerGroups: [] }, nodes: [], submits: 1 },
        preflight: { checks: [] },
        checkpointDir: join(root, 'ckpt'),
        training: { outcome: 'succeeded', finalStep: steps, totalTrainingSteps: steps },
        validation: { outcome: 'skipped' },
        stages: [{ stage: 'archive', attempt: 0, startedAt: new Date().toISOString() }],
        outcome: 'succeeded',
      },
    });
    const points = Array.from({ length: steps }, (_, s) => ({
      step: s + 1,
      values: {
        'critic/score/mean': s,
        'actor/entropy': 1 / (s + 1),
        'actor/pg_loss': s % 7,
        'timing_s/step': 1.5,
      },
    }));
    const series: MetricsSeries = { schemaVersion: 1, maxPoints: 2000, stride: 1, points };
    await writeFile(metricsSeriesPath(join(manifestPath, '..')), JSON.stringify(series));
    const t0 = performance.now();
    const record = await createTrackMlflowRun()({ mlflow: spec.tracking!.mlflow!, workflowId, manifestPath });
    times.push(performance.now() - t0);
    calls.push(record.calls);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(
    `[track-mlflow] ${steps} steps x 4 metrics, ${runs} runs: median ${median.toFixed(0)} ms (min ${times[0]!.toFixed(0)}, max ${times.at(-1)!.toFixed(0)}), REST calls per run ${calls.join(', ')}`,
  );
} finally {
  await server.stop();
}
