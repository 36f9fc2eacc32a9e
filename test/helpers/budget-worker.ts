/**
 * A worker process for the budget fault test: the experiment's stages are stand-ins (no Ray), the
 * budget activities are the real ones, against the real team budget workflow. settleBudget stops
 * right after its Update was applied, until the file BUDGET_GATE exists (it writes BUDGET_GATE.sent
 * first): a test SIGKILLs the process there, as a worker dies in the middle of a settle.
 * Env: TEMPORAL_ADDRESS, TASK_QUEUE, BUDGETS (JSON of budgets.yaml), BUDGET_GATE.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createReserveBudget, createSettleBudget } from '../../src/activities/budget/budget.js';
import type { ActivityDeps } from '../../src/activities/index.js';
import { budgetLedgerClient } from '../../src/worker/budget-ledger-client.js';
import { parseBudgets } from '../../src/domain/budget/budgets.js';
import { fakeActivities } from './fake-activities.js';
import { workflowBundle } from './temporal.js';

const address = process.env.TEMPORAL_ADDRESS!;
const taskQueue = process.env.TASK_QUEUE!;
const gate = process.env.BUDGET_GATE!;
const budgets = parseBudgets(JSON.parse(process.env.BUDGETS!), 'BUDGETS');

const client = new Client({ connection: await Connection.connect({ address }) });
const deps = {
  budgets: { load: async () => budgets, ledger: budgetLedgerClient(client, taskQueue) },
  pollIntervalMs: 200,
  budgetPollIntervalMs: 200,
} as unknown as ActivityDeps;
const settle = createSettleBudget(deps);
const { activities } = fakeActivities({
  reserveBudget: createReserveBudget(deps),
  settleBudget: async (input) => {
    const answer = await settle(input);
    writeFileSync(`${gate}.sent`, JSON.stringify(answer));
    while (!existsSync(gate)) await sleep(100);
    return answer;
  },
  // Two seconds of cluster time: a measurable allocation.
  train: async ({ spec }) => {
    await sleep(2000);
    const n = spec.trainer.totalTrainingSteps;
    return { finalStep: n, lastCheckpointStep: n, lastMetrics: {}, entrypoint: [] };
  },
});
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address }),
  taskQueue,
  workflowBundle: await workflowBundle(),
  activities,
});
console.log('budget-worker: polling');
await worker.run();
