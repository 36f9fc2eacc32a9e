import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { experiment } from '../../src/workflows/experiment.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { printHangReport } from '../helpers/hang-report.js';
import { testInput } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { waitUntil } from '../helpers/wait.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await timeSkippingEnv();
});
after(async () => {
  await env?.teardown();
});

/** Runs `body` with console.error captured; returns what was printed. */
async function printed(body: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  try {
    await body();
  } finally {
    console.error = original;
  }
  return lines.join('\n');
}

describe('hang report (what a timed-out workflow test prints)', () => {
  it('names each open workflow with its stack trace and its pending activities', async () => {
    const { activities } = fakeActivities({ train: heartbeatUntilCancelled });
    const taskQueue = uniqueId('tq-hang-report');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    const workflowId = uniqueId('hung');
    const report = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId,
        args: [testInput()],
      });
      await waitUntil('training', async () => (await handle.query<string>('stage')) === 'train');
      const text = await printed(() => printHangReport('a stand-in trainer that never ends'));
      await handle.cancel();
      await handle.result().catch(() => undefined);
      return text;
    });
    console.log(report); // what a hung test shows
    assert.match(report, /^== hang report: a stand-in trainer that never ends/);
    assert.match(report, new RegExp(`^1 open workflow\\(s\\): ${workflowId}$`, 'm'));
    assert.match(report, new RegExp(`-- workflow ${workflowId} \\(experiment, run [0-9a-f-]+\\)`));
    assert.match(report, /pending activities:\n\s+- train \(id \d+, state STARTED, attempt 1/);
    // The workflow's own stack: where it waits (the train stage), from the worker's bundle.
    assert.match(report, /stack trace[^\n]*:\n(\s+.*\n)*\s+at trainStage/);
    assert.match(report, /== end of hang report$/);
  });
});
