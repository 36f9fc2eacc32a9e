import { mkdir, writeFile } from 'node:fs/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { format, resolveConfig } from 'prettier';
import type { Activities } from '../../src/activities/index.js';
import { timeSkippingEnv, workflowBundle } from './temporal.js';

/** Where the replay test finds the histories; a file's name (without .json) is its workflow id. */
export const historiesDir = new URL('../workflows/histories/', import.meta.url);

/** One workflow run to record: its input, its (fake) activities, and what a user does meanwhile. */
export interface Recording {
  /** Also the file name: the replay test replays under the same id (child ids derive from it). */
  workflowId: string;
  workflowType: 'experiment' | 'campaign' | 'sweep' | 'reaper';
  args: unknown[];
  activities: Activities;
  /** Signals, Updates or a cancel while it runs; the run then goes on to its end. */
  drive?: (handle: WorkflowHandle, client: Client) => Promise<void>;
  /** Child workflows (from the parent's result) whose histories are worth keeping too. */
  children?: (result: unknown) => string[];
}

/** A scenario gets the client (stand-in trainers signal their workflow) and returns its recording. */
export type Scenario = (client: () => Client) => Recording;

/**
 * Runs each scenario to its end on one time-skipping server and writes each history (and the
 * chosen children's) as JSON into test/workflows/histories/. A failed or cancelled end is a
 * scenario's purpose, not an error; a run that is still open is.
 */
export async function recordHistories(scenarios: Record<string, Scenario>): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') }); // failed and cancelled runs are on purpose
  await mkdir(historiesDir, { recursive: true });
  const env = await timeSkippingEnv();
  try {
    for (const [name, scenario] of Object.entries(scenarios)) {
      const r = scenario(() => env.client);
      const taskQueue = `record-${name}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: await workflowBundle(),
        activities: r.activities,
      });
      const ids = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start(r.workflowType, {
          taskQueue,
          workflowId: r.workflowId,
          args: r.args,
        });
        await r.drive?.(handle, env.client);
        const result: unknown = await handle.result().catch(() => undefined);
        const { status } = await handle.describe();
        if (status.name === 'RUNNING') throw new Error(`${r.workflowId} is still running`);
        return [r.workflowId, ...(r.children?.(result) ?? [])];
      });
      for (const id of ids) await save(env.client, id);
    }
  } finally {
    await env.teardown();
  }
}

async function save(client: Client, workflowId: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const file = new URL(`${workflowId}.json`, historiesDir);
  // Written as Prettier writes it, so `prettier --check` passes on the recorded files as they are.
  const options = await resolveConfig(file.pathname);
  await writeFile(file, await format(historyToJSON(history), { ...options, parser: 'json' }));
  console.log(`${workflowId}.json: ${history.events?.length} events`);
}

/** Polls `ok` every 20 ms (real time: the stand-in activities run in real time). */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
