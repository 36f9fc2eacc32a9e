import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { loadConfig } from '../../src/config/config.js';
import type { ExperimentResult } from '../../src/domain/run/experiment-input.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { expectedFingerprint, writeModelDir } from '../helpers/model-dir.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * The environment probe on the local backend (real dev server, real Ray, the probe shipped as a
 * py_modules package): an image contract the venv does not meet fails the run once, with every
 * unmet item, and the cluster is torn down without a resubmit.
 */
let env: TestWorkflowEnvironment;
let storage: string;
const runRoot = `/tmp/ro-env-${process.pid}`;

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-env-'));
});
after(async () => {
  await env?.teardown();
  await rm(runRoot, { recursive: true, force: true });
  await rm(storage, { recursive: true, force: true });
});

describe('environment probe on the local backend', () => {
  it('a missing module and an unreadable model fail as one ImageContractUnmet: torn down, not resubmitted', async () => {
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('it-env');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(activityDeps(config, env.client)),
    });
    const { dir: modelDir, files } = await writeModelDir(join(storage, 'models', 'qwen-tiny'));
    await rm(join(modelDir, 'model-00002-of-00002.safetensors'));
    const base = testSpec({}, storage);
    const spec = {
      ...base,
      imageContract: { requires: ['ragen_toy', 'numpy', 'no_such_module_xyz'] },
      model: { path: modelDir },
      join: { ...base.join, maxResubmits: 2 },
    };
    const started = Date.now();
    const err = await worker
      .runUntil(
        env.client.workflow.execute<typeof experiment>('experiment', {
          taskQueue,
          workflowId: uniqueId('it-env-wf'),
          args: [testInput(spec)],
        }),
      )
      .then(
        () => assert.fail('the experiment ran on an environment that misses its contract'),
        (e: unknown) => e,
      );
    const seconds = (Date.now() - started) / 1000;
    assert.ok(err instanceof WorkflowFailedError);
    const cause = err.cause;
    assert.ok(cause instanceof ApplicationFailure);
    assert.equal(cause.type, 'ImageContractUnmet', cause.message);
    assert.match(
      cause.message,
      /module:no_such_module_xyz on head .*worker .*worker .*ModuleNotFoundError: No module named 'no_such_module_xyz'; fix: install no_such_module_xyz/,
    );
    assert.match(
      cause.message,
      /model:readable on .*names files that are missing: model-00002-of-00002\.safetensors/,
    );
    assert.doesNotMatch(cause.message, /module:(ragen_toy|numpy)/);
    const result = cause.details?.[0] as ExperimentResult;
    assert.equal(result.submits, 1, 'a failed image contract is never resubmitted');
    assert.equal(result.teardown.outcome, 'succeeded');
    assert.deepEqual(
      result.stages.map((s) => [s.stage, s.outcome]),
      [
        ['preflight', 'succeeded'],
        ['verify', 'succeeded'],
        ['submit', 'succeeded'],
        ['join', 'failed'],
        ['teardown', 'succeeded'],
        ['archive', 'succeeded'],
      ],
    );
    assert.deepEqual(await rayProcesses(), [], 'teardown left Ray processes');
    // The findings are in the manifest as well, the model fingerprinted although a shard is missing.
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')),
    );
    const probe = manifest.environment.probe;
    assert.ok(probe, 'environment.probe recorded');
    assert.equal(probe.ok, false);
    assert.deepEqual(probe.failures.map((f) => f.item).sort(), [
      'model:readable',
      'module:no_such_module_xyz',
    ]);
    assert.equal(probe.nodes.length, 3);
    assert.deepEqual(probe.model, { path: modelDir, source: 'path', revision: expectedFingerprint(files) });
    console.log(
      `environment probe (failing): wall_s ${probe.wall_s} in the driver, job ${probe.jobSeconds} s; run to failure ${seconds} s`,
    );
  });
});
