/**
 * Benchmark: a 1,000-child sweep on the time-skipping test server from the venv. Children are the
 * real `experiment` workflow on fake activities (stand-ins for Ray: every stage returns at once),
 * so this measures the orchestration: wall time, children per second, history size per run.
 *   npx tsx bench/sweep-1000.ts [children=1000] [concurrency=50] [historyEventLimit=5000]
 */
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { SweepResult } from '../src/domain/sweep/sweep.js';
import type { sweep } from '../src/workflows/sweep.js';
import { fakeActivities } from '../test/helpers/fake-activities.js';
import { seedSweep, sweepInput } from '../test/helpers/sweeps.js';
import { timeSkippingEnv, workflowBundle } from '../test/helpers/temporal.js';

const [children = 1000, concurrency = 50, historyEventLimit = 5000] = process.argv.slice(2).map(Number);
const env = await timeSkippingEnv();
try {
  const { activities } = fakeActivities();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'bench-sweep',
    workflowBundle: await workflowBundle(),
    activities,
    maxConcurrentWorkflowTaskExecutions: 50,
  });
  const spec = seedSweep(
    Array.from({ length: children }, (_, i) => i),
    { concurrency },
  );
  const started = Date.now();
  const { result, runs, childEvents } = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof sweep>('sweep', {
      taskQueue: 'bench-sweep',
      workflowId: `bench-sweep-${process.pid}`,
      args: [sweepInput(spec, { historyEventLimit })],
    });
    const result: SweepResult = await handle.result();
    // Walk the chain of runs (continue-as-new) from the first one and size each history.
    const runs: { events: number; bytes: number }[] = [];
    let runId: string | undefined = handle.firstExecutionRunId;
    while (runId) {
      const h: WorkflowHandle = env.client.workflow.getHandle(handle.workflowId, runId);
      const history: proto.temporal.api.history.v1.IHistory = await h.fetchHistory();
      const last = history.events?.at(-1);
      // The time-skipping server does not report historySize; the encoded history is the same measure.
      runs.push({
        events: history.events?.length ?? 0,
        bytes: proto.temporal.api.history.v1.History.encode(history).finish().length,
      });
      runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    // Each child's own history (an experiment on stand-in activities): the first, middle and last.
    const picks = [0, Math.floor(result.ranked.length / 2), result.ranked.length - 1];
    const childEvents: number[] = [];
    for (const i of new Set(picks)) {
      const child = result.ranked[i];
      if (!child) continue;
      const history = await env.client.workflow.getHandle(child.workflowId).fetchHistory();
      childEvents.push(history.events?.length ?? 0);
    }
    return { result, runs, childEvents };
  });
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `sweep of ${result.total} children (concurrency ${concurrency}, historyEventLimit ${historyEventLimit}): ${result.succeeded} succeeded, ${result.ranked.length} results kept`,
  );
  console.log(
    `wall time ${seconds.toFixed(1)} s; ${(result.total / seconds).toFixed(1)} children/s started and finished; max running ${result.maxRunning}`,
  );
  console.log(
    `runs ${runs.length}: ${runs.map((r, i) => `#${i + 1} ${r.events} events${r.bytes ? ` / ${(r.bytes / 1024).toFixed(0)} KiB` : ''}`).join(', ')}; total ${runs.reduce((n, r) => n + r.events, 0)} events`,
  );
  const parentPerChild = runs.reduce((n, r) => n + r.events, 0) / result.total;
  const childMax = Math.max(...childEvents);
  console.log(
    `history events per child: ${(parentPerChild + childMax).toFixed(1)} (the sweep's ${parentPerChild.toFixed(1)} + the child's own ${childMax}; children sampled: ${childEvents.join(', ')})`,
  );
} finally {
  await env.teardown();
}
