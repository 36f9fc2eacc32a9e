import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { format, resolveConfig } from 'prettier';
import type { Activities } from '../../src/activities/index.js';
import { budgetPatchActivation } from '../../src/worker/budget-patch-activation.js';
import type { BudgetsFile } from '../../src/domain/budget/budgets.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { type ScheduledAction, createSchedule, triggerSchedule } from '../../src/cli/schedule.js';
import type { ScheduleRequest } from '../../src/domain/spec/schedule.js';
import { currentRelease, historiesRoot } from './history-corpus.js';
import { stripStackPaths } from './stack-paths.js';
import { devServerEnv, timeSkippingEnv, workflowBundle } from './temporal.js';

/**
 * Where new recordings go: the folder of the release the code is (package.json's version), beside
 * the older releases' folders; a file's name (without .json) is its workflow id.
 */
export const recordingDir = (): string => join(historiesRoot, currentRelease());

/** One workflow run to record: its input, its (fake) activities, and what a user does meanwhile. */
export interface Recording {
  /** Also the file name: the replay test replays under the same id (child ids derive from it). */
  workflowId: string;
  workflowType: 'experiment' | 'campaign' | 'sweep' | 'reaper' | 'teamBudget';
  args: unknown[];
  activities: Activities;
  /** Signals, Updates or a cancel while it runs; the run then goes on to its end. */
  drive?: (handle: WorkflowHandle, client: Client) => Promise<void>;
  /**
   * The worker's budgets.yaml: as on a real worker, only a run of a team it lists takes the
   * team-budget branch (src/worker/budget-patch-activation.ts). Absent: the worker has none.
   */
  budgets?: BudgetsFile;
  /** Child workflows (from the parent's result) whose histories are worth keeping too. */
  children?: (result: unknown) => string[];
  /**
   * Started by a Temporal Schedule (id `workflowId`) and its trigger instead: the run's id is the
   * server's (`<kind>-<name>-<time>`). Needs the dev server (the time-skipping one has no schedules).
   */
  schedule?: Omit<ScheduleRequest, 'scheduleId'>;
}

/** A scenario gets the client (stand-in trainers signal their workflow) and returns its recording. */
export type Scenario = (client: () => Client) => Recording;

/** A history's file name: its workflow id, URI-encoded (a scheduled run's id holds its time). */
export const historyFileName = (workflowId: string): string => `${encodeURIComponent(workflowId)}.json`;

/**
 * Runs each scenario to its end and writes each history (and the chosen children's) as JSON into
 * test/workflows/histories/<release>/: on the time-skipping server, or on the dev server where a
 * Schedule starts the run. A failed or cancelled end is a scenario's purpose, not an error; a run
 * that is still open is. A history already recorded is never written over: a recording is a record.
 */
export async function recordHistories(scenarios: Record<string, Scenario>): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') }); // failed and cancelled runs are on purpose
  await mkdir(recordingDir(), { recursive: true });
  // The client is bound late: the scenarios built now run on whichever server they need.
  let client: Client | undefined;
  const built = Object.entries(scenarios).map(([name, scenario]) => ({ name, r: scenario(() => client!) }));
  const byServer = [
    { start: timeSkippingEnv, list: built.filter(({ r }) => !r.schedule) },
    { start: () => devServerEnv(), list: built.filter(({ r }) => r.schedule) },
  ];
  for (const { start, list } of byServer) {
    if (list.length === 0) continue;
    const env = await start();
    client = env.client;
    try {
      for (const { name, r } of list) await recordOne(env, name, r);
    } finally {
      await env.teardown();
    }
  }
}

async function recordOne(env: TestWorkflowEnvironment, name: string, r: Recording): Promise<void> {
  if (!r.schedule) refuseToOverwrite(r.workflowId);
  const taskQueue = `record-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: r.activities,
    // The decision a real worker makes for each new run (the worker's createWorker installs the same).
    patchActivationCallback: budgetPatchActivation(r.budgets && (() => r.budgets!)),
  });
  const ids = await worker.runUntil(async () => {
    const handle = r.schedule
      ? await startBySchedule(env.client, r, taskQueue)
      : await env.client.workflow.start(r.workflowType, {
          taskQueue,
          workflowId: r.workflowId,
          args: r.args,
        });
    await r.drive?.(handle, env.client);
    const result: unknown = await handle.result().catch(() => undefined);
    const { status } = await handle.describe();
    if (status.name === 'RUNNING') throw new Error(`${handle.workflowId} is still running`);
    return [handle.workflowId, ...(r.children?.(result) ?? [])];
  });
  ids.forEach(refuseToOverwrite);
  for (const id of ids) await save(env.client, id);
}

/** CONTRIBUTING.md: never re-record a history (to make a failing replay pass, or at all). */
function refuseToOverwrite(workflowId: string): void {
  const file = join(recordingDir(), historyFileName(workflowId));
  if (existsSync(file))
    throw new Error(
      `${file} is recorded already: a recording is never replaced; give the scenario a new workflow id`,
    );
}

/** Creates the schedule, fires it once (trigger), and hands back the run it started; the schedule is deleted. */
async function startBySchedule(client: Client, r: Recording, taskQueue: string): Promise<WorkflowHandle> {
  const request = { ...r.schedule!, scheduleId: r.workflowId };
  const action = { kind: r.workflowType, input: r.args[0] } as ScheduledAction;
  await createSchedule(client, request, action, taskQueue);
  const schedule = client.schedule.getHandle(request.scheduleId);
  try {
    await triggerSchedule(client, request.scheduleId);
    let started: string | undefined;
    await until('the scheduled run', async () => {
      started = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
      return started !== undefined;
    });
    return client.workflow.getHandle(started!);
  } finally {
    await schedule.delete();
  }
}

async function save(client: Client, workflowId: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  stripStackPaths(history);
  // A path, not a URL: a URL would decode the %3A of a scheduled run's id back into a colon.
  const file = join(recordingDir(), historyFileName(workflowId));
  // Written as Prettier writes it, so `prettier --check` passes on the recorded files as they are.
  const options = await resolveConfig(file);
  await writeFile(file, await format(historyToJSON(history), { ...options, parser: 'json' }));
  console.log(`${historyFileName(workflowId)}: ${history.events?.length} events`);
}

/** Polls `ok` every 20 ms (real time: the stand-in activities run in real time). */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
