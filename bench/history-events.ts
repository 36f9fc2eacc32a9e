/**
 * Benchmark: how many history events an experiment makes, on the time-skipping test server with
 * stand-in activities (every stage returns at once; no progress signals, so no checkpoint upserts).
 * Started as the CLI starts it (search attributes and summary in the start options) and without
 * them (as the recorded histories were). Run under the shared lock (it starts a test server).
 *   npx tsx bench/history-events.ts
 */
import { Worker } from '@temporalio/worker';
import { experimentStart } from '../src/cli/start-options.js';
import { fakeActivities } from '../test/helpers/fake-activities.js';
import { testInput } from '../test/helpers/specs.js';
import { timeSkippingEnv, workflowBundle } from '../test/helpers/temporal.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/history-events.ts',
  'src/workflows',
  'src/cli/start-options.ts',
  'test/helpers/fake-activities.ts',
];

const env = await timeSkippingEnv();
const rows: { withStartOptions: boolean; events: number; upserts: number; patchMarkers: number }[] = [];
try {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: 'bench-history',
    workflowBundle: await workflowBundle(),
    activities: fakeActivities().activities,
  });
  await worker.runUntil(async () => {
    for (const withStartOptions of [true, false]) {
      const input = testInput();
      const handle = await env.client.workflow.start('experiment', {
        taskQueue: 'bench-history',
        workflowId: `bench-history-${withStartOptions}`,
        args: [input],
        ...(withStartOptions ? experimentStart(input.spec) : {}),
      });
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      const upserts = events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length;
      const markers = events.filter((e) => e.markerRecordedEventAttributes).length;
      rows.push({ withStartOptions, events: events.length, upserts, patchMarkers: markers });
      console.log(
        `${withStartOptions ? 'with start options   ' : 'without start options'}: ${events.length} events (${upserts} search-attribute upserts, ${markers} patch markers)`,
      );
    }
  });
  writeResults('history-events', measuredCode, { rows });
} finally {
  await env.teardown();
}
