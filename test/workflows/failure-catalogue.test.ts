/**
 * The catalogue's `resubmit` column through the experiment workflow: for every error type, an
 * experiment whose first all-reduce check fails with it (join.maxResubmits 1). A type the catalogue
 * resubmits for gets a fresh cluster and succeeds; any other ends the run with its type, one
 * cluster submitted. All runs share one worker on the test server (time not skipped), a few at a time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { FAILURE_CATALOGUE } from '../../src/domain/failures/catalogue.js';
import type { ExperimentResult } from '../../src/domain/run/experiment-input.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

const BATCH = 6;

interface Ending {
  outcome?: string;
  type?: string;
  submits?: number;
}

describe('the failure catalogue through the experiment workflow', () => {
  it('resubmits a cluster whose join failed exactly for the types the catalogue says', async () => {
    const prefix = uniqueId('catalogue');
    const names = Object.keys(FAILURE_CATALOGUE);
    const failed = new Set<string>();
    const { activities } = fakeActivities({
      // The first check of each run fails with its type; the workflow reads only the type.
      allReduceCheck: async () => {
        const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
        const type = workflowId.slice(prefix.length + 1);
        if (!failed.has(type)) {
          failed.add(type);
          throw ApplicationFailure.create({ type, message: `stand-in ${type}`, nonRetryable: true });
        }
        return { ok: true, path: 'fake', world_size: 2, bus_bandwidth_gbps: 1 };
      },
    });
    const taskQueue = uniqueId('tq');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    // A plain client: waiting on results never lets the test server skip time, so no run can be
    // timed out by a skip while the worker is still starting; no run here waits on a timer.
    const client = new Client({ connection: env.connection, namespace: env.namespace });
    const ending = async (name: string): Promise<Ending> => {
      const spec = testSpec();
      spec.join.maxResubmits = 1;
      const handle = await client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: `${prefix}-${name}`,
        args: [testInput(spec)],
      });
      try {
        const r = await handle.result();
        return { outcome: r.outcome, submits: r.submits };
      } catch (err) {
        assert.ok(err instanceof WorkflowFailedError, String(err));
        // Anything but the run's own failure shows as what it is, so a diff says why.
        const cause = err.cause;
        if (!(cause instanceof ApplicationFailure)) return { outcome: `${cause?.name}: ${cause?.message}` };
        const result = cause.details?.[0] as ExperimentResult | undefined;
        return { outcome: 'failed', type: cause.type ?? undefined, submits: result?.submits };
      }
    };
    // A few runs at a time: the test server answers slowly with dozens of result polls open.
    const endings: Ending[] = [];
    await worker.runUntil(async () => {
      for (let i = 0; i < names.length; i += BATCH)
        endings.push(...(await Promise.all(names.slice(i, i + BATCH).map(ending))));
    });
    const seen = Object.fromEntries(names.map((name, i) => [name, endings[i]]));
    const expected = Object.fromEntries(
      Object.entries(FAILURE_CATALOGUE).map(([name, e]) => [
        name,
        e.resubmit ? { outcome: 'succeeded', submits: 2 } : { outcome: 'failed', type: name, submits: 1 },
      ]),
    );
    assert.deepEqual(seen, expected);
  });
});
