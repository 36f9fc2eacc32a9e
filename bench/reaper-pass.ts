/**
 * Benchmark: one reaper pass over 100 listed local clusters (planted state files, no processes:
 * a fake listing) against the real Temporal dev server; 50 owners run, 50 do not exist.
 *   npx tsx bench/reaper-pass.ts
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createReapClusters } from '../src/activities/cluster/reap.js';
import { loadConfig } from '../src/config/config.js';
import type { ReaperReport } from '../src/domain/cluster/reaper.js';
import { activityDeps } from '../src/worker/worker.js';
import { devServerEnv } from '../test/helpers/temporal.js';
import { testInput } from '../test/helpers/specs.js';

const runRoot = `/tmp/ro-bench-${process.pid}`;
const env = await devServerEnv();
try {
  const running = await env.client.workflow.start('experiment', {
    taskQueue: 'unserved-bench',
    workflowId: `bench-owner-${process.pid}`,
    args: [testInput()],
  });
  const old = new Date(Date.now() - 3_600_000).toISOString();
  for (let i = 0; i < 100; i++) {
    const name = `bench-${i}`;
    const owner = {
      experiment: 'bench',
      workflowId: i % 2 === 0 ? running.workflowId : `missing-${i}`,
      runId: 'r',
      attempt: 0,
    };
    await mkdir(join(runRoot, name), { recursive: true });
    await writeFile(
      join(runRoot, name, 'cluster.json'),
      JSON.stringify({
        name,
        owner,
        createdAt: old,
        nodeIp: '127.0.0.2',
        gcsPort: 1,
        dashboardUrl: 'http://127.0.0.1:1',
        tempDir: join(runRoot, 't'),
        complete: true,
        nodes: [],
      }),
    );
  }
  const deps = activityDeps({ ...loadConfig(), RAGEN_RUN_ROOT: runRoot }, env.client);
  const report: ReaperReport = await new MockActivityEnvironment().run(createReapClusters(deps), {
    graceSeconds: 60,
  });
  const count = (a: string) => report.entries.filter((e) => e.action === a).length;
  console.log(
    `reaper pass over ${report.entries.length} clusters: ${report.durationMs} ms (${count('kept')} kept, ${count('deleted')} deleted)`,
  );
  await running.terminate('bench done');
} finally {
  await env.teardown();
  await rm(runRoot, { recursive: true, force: true });
}
