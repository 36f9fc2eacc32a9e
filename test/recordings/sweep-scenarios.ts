import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, type Client } from '@temporalio/client';
import type { Activities } from '../../src/activities/index.js';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { SearchActivities } from '../../src/domain/sweep/sweep-search.js';
import type { SweepResult } from '../../src/domain/sweep/sweep.js';
import { setSweepLimitsUpdate } from '../../src/workflows/sweep-definitions.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { type Scenario, until } from '../helpers/history-recorder.js';
import { testSpec } from '../helpers/specs.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';

const METRIC = 'val-env/CoordSokoban/success';

/**
 * A stand-in trainer for ASHA: quality falls with the seed, each validation is signalled like the
 * real activity does, a resume continues from its checkpoint's step; a stop arrives as cancellation.
 */
function ashaTrainer(client: () => Client): Activities['train'] {
  return async ({ spec, reportValidations, resume }) => {
    const ctx = Context.current();
    const id = ctx.info.workflowExecution?.workflowId ?? '';
    const quality = 1 - spec.trainer.seedTrain / 10;
    const from = resume.mode === 'resume_path' ? Number(/global_step_(\d+)$/.exec(resume.path)?.[1]) : 0;
    for (let step = from + 1; step <= spec.trainer.totalTrainingSteps; step++) {
      if (reportValidations && step % spec.trainer.testFreq === 0) {
        await client()
          .workflow.getHandle(id)
          .signal('progress', {
            step,
            lastCheckpointStep: step,
            validation: { step, metrics: { [METRIC]: quality } },
          });
      }
      for (let i = 0; i < 3; i++) {
        ctx.heartbeat();
        await ctx.sleep(25);
      }
    }
    const total = spec.trainer.totalTrainingSteps;
    return { finalStep: total, lastCheckpointStep: total, lastMetrics: {}, entrypoint: [] };
  };
}

/** Stand-ins for the search worker's tpeAsk/tpeTell: a fixed learning rate per child index. */
const standInSearch = (): SearchActivities => ({
  tpeAsk: async ({ index }) => ({ 'algorithm.lr': 10 ** -(2 + index) }),
  tpeTell: async () => 'complete',
});

/** Every child's training fails for good. */
const failingChildren = () =>
  fakeActivities({
    train: async () => {
      throw ApplicationFailure.create({
        type: ErrorTypes.TrainingFailed,
        message: 'stand-in trainer exited 1',
        nonRetryable: true,
      });
    },
  }).activities;

const byOutcome = (outcome: string) => (result: unknown) =>
  ((result as SweepResult | undefined)?.ranked ?? [])
    .filter((c) => c.outcome === outcome)
    .map((c) => c.workflowId);

/** Sweeps: ASHA stops children and promotes one; the failure budget runs out; `sweep set` changes limits. */
export const sweepScenarios: Record<string, Scenario> = {
  'sweep-asha-promoted': (client) => ({
    workflowId: 'sweep-asha-promoted',
    workflowType: 'sweep',
    // Rung 2 only; quality by seed 0.9, 0.5, 0.3, 0.2: child 1 is stopped, then promoted when the
    // rung holds four values (see test/workflows/sweep-control.test.ts for the same run, asserted).
    args: [
      sweepInput(
        parseSweepMapping(
          {
            name: 'asha-promote',
            base: {
              ...testSpec(),
              trainer: { ...testSpec().trainer, totalTrainingSteps: 4, testFreq: 2, saveFreq: 2 },
            },
            parameters: { grid: { 'trainer.seedTrain': [1, 5, 7, 8] } },
            scheduler: { type: 'asha', metric: METRIC, gracePeriod: 2, reductionFactor: 2, promote: true },
          },
          'recorded asha sweep',
        ),
      ),
    ],
    activities: fakeActivities({
      train: ashaTrainer(client),
      latestCompleteCheckpoint: async ({ checkpointDir }) => {
        const latest = { step: 2, path: `${checkpointDir}/global_step_2`, sha256: 'a'.repeat(64) };
        return { latest, checkpoints: [{ step: 2, sha256: latest.sha256 }], untrusted: [] };
      },
    }).activities,
    // A child stopped by the scheduler: the experiment's prune path (signal 'stopEarly').
    children: (result) => byOutcome('pruned')(result).slice(0, 1),
  }),

  // search tpe: each child's parameters asked of the search worker, each end told to it. Stand-in
  // tpeAsk/tpeTell (the Python worker's activities) on the recording's own task queue.
  'sweep-tpe': () => ({
    workflowId: 'sweep-tpe',
    workflowType: 'sweep',
    args: [
      sweepInput(
        parseSweepMapping(
          {
            name: 'tpe-recorded',
            base: testSpec(),
            parameters: {},
            search: {
              type: 'tpe',
              trials: 3,
              seed: 1,
              params: { 'algorithm.lr': { logUniform: [1e-5, 1e-1] } },
            },
            concurrency: 2,
          },
          'recorded tpe sweep',
        ),
        { searchTaskQueue: 'record-sweep-tpe' },
      ),
    ],
    activities: {
      ...fakeActivities().activities,
      ...standInSearch(),
    } as Activities,
  }),

  'sweep-failure-budget-exhausted': () => ({
    workflowId: 'sweep-failure-budget-exhausted',
    workflowType: 'sweep',
    args: [sweepInput(seedSweep([1, 2, 3, 4], { concurrency: 1, failureBudget: 2 }))],
    activities: failingChildren(),
  }),

  // Started by a Schedule (the memo it puts on the run): the failed sweep tells the schedule's
  // `paused` event; tracked and notified, so the parent's tracker run and the posts are recorded.
  'sweep-scheduled': () => {
    const sweep = seedSweep([1, 2], { concurrency: 1, failureBudget: 1 });
    sweep.base = {
      ...sweep.base,
      tracking: { mlflow: { uri: 'http://127.0.0.1:1', experiment: 'recorded' } },
      notify: [{ url: 'http://127.0.0.1:1/hook' }],
    };
    return {
      workflowId: 'sweep-scheduled',
      workflowType: 'sweep',
      args: [sweepInput(sweep)],
      activities: failingChildren(),
      schedule: { every: '24h', overlap: 'skip', catchupWindow: '1m', pauseOnFailure: true },
    };
  },

  'sweep-limits-set': () => {
    let trainsStarted = 0;
    let held = true;
    return {
      workflowId: 'sweep-limits-set',
      workflowType: 'sweep',
      args: [sweepInput(seedSweep([1, 2, 3, 4], { concurrency: 1 }))],
      activities: fakeActivities({
        train: async ({ spec }) => {
          trainsStarted++;
          const ctx = Context.current();
          while (held) {
            ctx.heartbeat();
            await sleep(20);
          }
          const total = spec.trainer.totalTrainingSteps;
          return { finalStep: total, lastCheckpointStep: total, lastMetrics: {}, entrypoint: [] };
        },
      }).activities,
      drive: async (handle) => {
        await until('the first child training', () => trainsStarted >= 1);
        await handle.executeUpdate(setSweepLimitsUpdate, { args: [{ concurrency: 3, failureBudget: 2 }] });
        await until('three children training', () => trainsStarted >= 3);
        held = false;
      },
    };
  },
};
