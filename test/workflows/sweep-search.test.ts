import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { validationReporter } from '../../src/activities/train/validation-reports.js';
import type { Activities } from '../../src/activities/index.js';
import type { SweepInput, SweepResult } from '../../src/domain/sweep/sweep.js';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import { loadConfig } from '../../src/config/config.js';
import { type SearchWorker, startSearchWorker } from '../../src/worker/search-worker.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { fakeActivities } from '../helpers/fake-activities.js';
import { awaitRungVerdict } from '../helpers/rung-verdict.js';
import { sweepInput } from '../helpers/sweeps.js';
import { testSpec } from '../helpers/specs.js';
import { timeSkippingEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * A TPE sweep end to end: the real search worker (Python, Optuna, a real SQLite study) serves
 * tpeAsk/tpeTell on the time-skipping server; the children run on stand-in activities (no Ray).
 */
let env: TestWorkflowEnvironment;
let search: SearchWorker;
let dir: string;
const searchQueue = uniqueId('search-tq');
before(async () => {
  env = await timeSkippingEnv();
  dir = await mkdtemp(join(tmpdir(), 'ragen-search-'));
  search = await startSearchWorker({
    python: loadConfig().python,
    address: env.address,
    namespace: env.namespace ?? 'default',
    taskQueue: searchQueue,
    runRoot: dir,
  });
  console.log(`[search worker] start ${search.startMs} ms, peak RSS ${search.maxRssKiB} KiB`);
});
after(async () => {
  await search?.stop();
  await env?.teardown();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Stand-in objective: validation success peaks at lr = 1e-3 (the trainer override). */
const successOf = (lr: number) => Math.max(0, 1 - Math.abs(Math.log10(lr) + 3) / 4);

/** A stand-in validation at `step` whose success is successOf the child's learning rate. */
const validatedAt =
  (step: number): Activities['validate'] =>
  async ({ spec, checkpointPath }) => ({
    checkpoint: checkpointPath,
    step,
    episodes: 8,
    seed: spec.validation.seed,
    success_rate: successOf(Number(spec.trainer.overrides['algorithm.lr'])),
    mean_reward: 0,
    mean_actions: 0,
    records: [],
  });

/** The study as Optuna holds it: [index, state, value, params] per trial. */
function studyTrials(study: string): [number, string, number | null, Record<string, number>][] {
  const script = `
import json, optuna, sys
s = optuna.load_study(study_name=sys.argv[1], storage=sys.argv[2])
print(json.dumps([[t.user_attrs["ragen.index"], t.state.name, t.value, t.params] for t in s.get_trials()]))`;
  const out = execFileSync(loadConfig().python, ['-c', script, study, `sqlite:///${dir}/search/optuna.db`]);
  return JSON.parse(out.toString()) as never;
}

async function runSweep(
  input: SweepInput,
  activities: Activities,
): Promise<{ result: SweepResult; workflowId: string }> {
  const taskQueue = uniqueId('sweep-search-tq');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    maxConcurrentWorkflowTaskExecutions: 50,
  });
  const workflowId = uniqueId('tpe-sweep');
  const result = await worker.runUntil(
    env.client.workflow.execute<typeof sweep>('sweep', { taskQueue, workflowId, args: [input] }),
  );
  return { result, workflowId };
}

describe('sweep search tpe (time-skipping server, real search worker, stand-in children)', () => {
  it('asks each child its parameters, tells the study each outcome once, and ranks them', async () => {
    const { activities } = fakeActivities({
      validate: validatedAt(1),
    });
    const spec = parseSweepMapping(
      {
        name: 'tpe-sweep',
        base: testSpec(),
        parameters: {},
        search: {
          type: 'tpe',
          trials: 6,
          seed: 1,
          params: { 'algorithm.lr': { logUniform: [1e-5, 1e-1] }, 'trainer.seedTrain': { intRange: [0, 3] } },
        },
        concurrency: 2,
      },
      'tpe test sweep',
    );
    const { result, workflowId } = await runSweep(
      sweepInput(spec, { searchTaskQueue: searchQueue }),
      activities,
    );
    assert.equal(result.total, 6);
    assert.equal(result.succeeded, 6);
    for (const row of result.ranked) {
      const lr = row.params['algorithm.lr'] as number;
      assert.ok(lr >= 1e-5 && lr <= 1e-1, `lr ${lr} in range`);
      assert.ok([0, 1, 2, 3].includes(row.params['trainer.seedTrain'] as number));
      assert.equal(row.successRate, successOf(lr), 'the child ran with the asked parameters');
    }
    // One trial per child, keyed by its index, told once with the child's value.
    const trials = studyTrials(workflowId).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(
      trials.map((t) => t[0]),
      [0, 1, 2, 3, 4, 5],
    );
    for (const [index, state, value, params] of trials) {
      const row = result.ranked.find((r) => r.index === index);
      assert.equal(state, 'COMPLETE');
      assert.equal(value, row?.successRate);
      assert.deepEqual(params, row?.params);
    }
  });

  it('with ASHA: a child stopped at its rung is told to the study as pruned, with its rung value', async () => {
    // A stand-in trainer (as in sweep-control.test.ts): validates every 2 steps, reports through
    // the progress signal; quality comes from the asked lr, so ASHA stops the worse children.
    const { activities } = fakeActivities({
      train: async ({ spec, reportValidations, reportSteps }) => {
        const ctx = Context.current();
        const id = ctx.info.workflowExecution?.workflowId ?? '';
        const quality = successOf(Number(spec.trainer.overrides['algorithm.lr']));
        const reporter = validationReporter(0, reportSteps);
        for (let step = 1; step <= spec.trainer.totalTrainingSteps; step++) {
          const line = { step, metrics: { 'val-env/CoordSokoban/success': quality } };
          const due = step % spec.trainer.testFreq === 0 ? reporter.newValidations([line]) : [];
          for (const validation of reportValidations ? due : []) {
            await env.client.workflow.getHandle(id).signal('progress', { step, validation });
            // Lockstep: the child waits at the rung for the scheduler's verdict (a stop cancels it here).
            await awaitRungVerdict(env.client, step);
          }
          ctx.heartbeat();
        }
        const total = spec.trainer.totalTrainingSteps;
        return { finalStep: total, lastCheckpointStep: total, lastMetrics: {}, entrypoint: [] };
      },
      validate: validatedAt(8),
    });
    const spec = parseSweepMapping(
      {
        name: 'tpe-asha',
        base: {
          ...testSpec(),
          trainer: { ...testSpec().trainer, totalTrainingSteps: 8, testFreq: 2, saveFreq: 2 },
        },
        parameters: {},
        search: { type: 'tpe', trials: 5, seed: 4, params: { 'algorithm.lr': { logUniform: [1e-5, 1e-1] } } },
        scheduler: {
          type: 'asha',
          metric: 'val-env/CoordSokoban/success',
          gracePeriod: 2,
          reductionFactor: 2,
        },
      },
      'tpe asha test sweep',
    );
    const { result, workflowId } = await runSweep(
      sweepInput(spec, { searchTaskQueue: searchQueue }),
      activities,
    );
    assert.equal(result.total, 5);
    assert.ok(
      (result.pruned ?? 0) >= 1,
      `ASHA stopped some child (seed 4): ${JSON.stringify(result.ranked)}`,
    );
    const trials = studyTrials(workflowId);
    assert.equal(trials.length, 5);
    for (const row of result.ranked) {
      const trial = trials.find((t) => t[0] === row.index);
      if (row.outcome === 'pruned') {
        assert.equal(trial?.[1], 'PRUNED');
        assert.deepEqual(row.lastIntermediate?.[1], successOf(row.params['algorithm.lr'] as number));
      } else {
        assert.equal(row.outcome, 'succeeded');
        assert.equal(trial?.[1], 'COMPLETE');
        assert.equal(trial?.[2], row.successRate);
      }
    }
  });
});
