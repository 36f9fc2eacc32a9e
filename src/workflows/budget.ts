import { CancellationScope } from '@temporalio/workflow';
import { estimateGpuHours } from '../domain/budget/budgets.js';
import { workerGpus } from '../domain/spec/experiment.js';
import { gpuUsageOfStages } from '../domain/usage/gpu-usage.js';
import { ErrorTypes } from '../domain/failures/error-types.js';
import { workflowNowIso } from './clock.js';
import { unwrapFailure } from './failure-info.js';
import type { ExperimentRun } from './experiment-run.js';
import { reserveBudget, settleBudget } from './policies.js';
import type { RunBudget } from './run-budget.js';

/**
 * Reserve the run's estimate in its team's budget (the worker's budgets.yaml says whether it has
 * one). Queued: waits (the status query shows stage `budget`). Refused: throws BudgetRefused, before
 * anything is created.
 */
export async function reserveRunBudget(run: ExperimentRun): Promise<void> {
  const { spec } = run.input;
  const budget: RunBudget = {
    team: spec.team ?? 'default',
    key: `${run.ids.workflowId}/${run.ids.runId}`,
    estimateGpuHours: estimateGpuHours(spec),
  };
  run.budget = budget;
  run.status.stage = 'budget';
  try {
    budget.reserved = await reserveBudget({
      team: budget.team,
      request: { key: budget.key, gpuHours: budget.estimateGpuHours },
    });
  } catch (err) {
    budget.refused = isRefusal(err);
    throw err;
  }
}

const isRefusal = (err: unknown): boolean => unwrapFailure(err).type === ErrorTypes.BudgetRefused;

/**
 * Settle the measured allocation (GPUs x the clusters' lifetime, as the manifest counts it) after
 * teardown, on success, failure and cancel alike; never cancelled. A run that was refused or is not
 * budgeted has nothing to settle; one cancelled while queued settles 0 and leaves the queue.
 */
export async function settleRunBudget(run: ExperimentRun): Promise<void> {
  const { budget } = run;
  if (!budget || budget.refused || budget.reserved?.status === 'unbudgeted') return;
  const usage = gpuUsageOfStages(run.stages, workerGpus(run.input.spec), workflowNowIso());
  budget.settled = await CancellationScope.nonCancellable(() =>
    settleBudget({
      team: budget.team,
      ...(budget.reserved?.status === 'granted' ? { budget: budget.reserved.budget } : {}),
      key: budget.key,
      gpuHours: usage.allocatedSeconds / 3600,
    }),
  );
}
