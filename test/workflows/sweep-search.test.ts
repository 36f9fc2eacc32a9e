import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import { loadConfig } from '../../src/config.js';
import { type SearchWorker, startSearchWorker } from '../../src/search-worker.js';
import type { sweep } from '../../src/workflows/sweep.js';
import { fakeActivities } from '../helpers/fake-activities.js';
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

/** The study as Optuna holds it: [index, state, value, params] per trial. */
function studyTrials(study: string): [number, string, number | null, Record<string, number>][] {
  const script = `
import json, optuna, sys
s = optuna.load_study(study_name=sys.argv[1], storage=sys.argv[2])
print(json.dumps([[t.user_attrs["ragen.index"], t.state.name, t.value, t.params] for t in s.get_trials()]))`;
  const out = execFileSync(loadConfig().python, ['-c', script, study, `sqlite:///${dir}/search/optuna.db`]);
  return JSON.parse(out.toString()) as never;
}

describe('sweep search tpe (time-skipping server, real search worker, stand-in children)', () => {
  it('asks each child its parameters, tells the study each outcome once, and ranks them', async () => {
    const { activities } = fakeActivities({
      validate: async ({ spec, checkpointPath }) => ({
        checkpoint: checkpointPath,
        step: 1,
        episodes: 8,
        seed: spec.validation.seed,
        success_rate: successOf(Number(spec.trainer.overrides['algorithm.lr'])),
        mean_reward: 0,
        mean_actions: 0,
        records: [],
      }),
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
    const taskQueue = uniqueId('sweep-search-tq');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    const workflowId = uniqueId('tpe-sweep');
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof sweep>('sweep', {
        taskQueue,
        workflowId,
        args: [sweepInput(spec, { searchTaskQueue: searchQueue })],
      }),
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
});
