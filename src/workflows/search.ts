import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { ParamSet } from '../domain/sweep/sweep.js';
import { SEARCH_TASK_QUEUE, type SearchActivities, tellOf, tpeSpace } from '../domain/sweep/sweep-search.js';
import type { SweepRun } from './sweep-run.js';

/**
 * The search worker's activities (Python, Optuna): short calls on a SQLite or PostgreSQL study.
 * Both are idempotent per child, so retries are safe; a worker that is down makes the sweep wait.
 */
const searchProfile = {
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
  },
} as const;

const searchActivities = (run: SweepRun) =>
  proxyActivities<SearchActivities>({
    ...searchProfile,
    taskQueue: run.input.searchTaskQueue ?? SEARCH_TASK_QUEUE,
  });

/** search tpe: ask the study for child `index`'s parameters and keep them (they are carried on). */
export async function askSearch(run: SweepRun, index: number): Promise<void> {
  const { search, objective } = run.input.sweep;
  if (!search) return;
  const params: ParamSet = await searchActivities(run).tpeAsk({
    study: run.ids.workflowId,
    index,
    seed: search.seed,
    direction: objective.direction,
    space: tpeSpace(search),
    trials: search.trials,
  });
  run.paramSets[index] = params;
}

/** search tpe: tell the study how child `index` ended (even while the sweep is being cancelled). */
export async function tellSearch(run: SweepRun, index: number): Promise<void> {
  if (!run.input.sweep.search) return;
  const row = run.results.find((r) => r.index === index);
  if (!row) return;
  await CancellationScope.nonCancellable(() =>
    searchActivities(run).tpeTell({ study: run.ids.workflowId, index, ...tellOf(row) }),
  );
}
