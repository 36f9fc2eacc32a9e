import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ActivityDeps } from '../../src/activities/common/deps.js';
import { createTrain } from '../../src/activities/train/train.js';
import { createValidate } from '../../src/activities/validate/validate.js';
import { LocalBackend } from '../../src/backends/local/local-backend.js';
import { RayDashboardClient } from '../../src/backends/ray/dashboard-client.js';
import { loadConfig } from '../../src/config/config.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { ValidationResult } from '../../src/domain/run/results.js';
import { rayProcesses } from '../helpers/processes.js';
import { testSpec } from '../helpers/specs.js';

/**
 * Both validation runners on a real local Ray cluster with the real payload: the trainer itself
 * (trainer.val_only=True from the final checkpoint, as on a RAGEN image) and the payload's runner.
 */
const runRoot = `/tmp/ro-vr-${process.pid}`;
let dir: string;
let backend: LocalBackend;
let handle: ClusterHandle | undefined;
let spec: ExperimentSpec;
let checkpointDir: string;

async function treeDigest(root: string): Promise<string> {
  const hash = createHash('sha256');
  for (const entry of (await readdir(root, { recursive: true })).sort()) {
    const path = join(root, entry);
    if ((await stat(path)).isFile()) hash.update(entry).update(await readFile(path));
  }
  return hash.digest('hex');
}

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  dir = await mkdtemp(join(tmpdir(), 'validate-runners-'));
  const config = loadConfig();
  backend = new LocalBackend({
    runRoot,
    rayBin: config.rayBin,
    python: config.python,
    nodeIp: config.RAGEN_NODE_IP,
  });
  const base = testSpec({}, dir);
  // Small training-time validation in the overrides: the trainer runner must replace it with validation.episodes.
  spec = {
    ...base,
    trainer: {
      ...base.trainer,
      totalTrainingSteps: 4,
      saveFreq: 2,
      overrides: { 'es_manager.val.env_groups': 8 },
    },
    validation: { ...base.validation, episodes: 24 },
  };
  checkpointDir = join(dir, 'checkpoints');
});
after(async () => {
  if (handle) await backend.deleteCluster(handle);
  await rm(runRoot, { recursive: true, force: true });
  if (dir) await rm(dir, { recursive: true, force: true });
});

const deps = (): ActivityDeps => ({
  backends: { local: backend },
  rayHead: (url, token) => new RayDashboardClient(url, token),
  reportProgress: async () => undefined,
  workflowStatus: async () => undefined,
  pollIntervalMs: 500,
});

describe('validation runners (real local Ray, real payload)', () => {
  let byTrainer: ValidationResult;

  it('trains 4 steps to have a final checkpoint', async () => {
    handle = await backend.createCluster({
      name: 'val-runners-a0',
      spec,
      owner: { experiment: spec.name, workflowId: 'val-runners', runId: 'r', attempt: 0 },
    });
    const result = await new MockActivityEnvironment().run(createTrain(deps()), {
      spec,
      handle,
      checkpointDir,
      resume: { mode: 'disable' as const },
    });
    assert.equal((result as { finalStep: number }).finalStep, 4);
  });

  it("the trainer runner validates the checkpoint's step with val_only, on validation.seed levels, and writes nothing to the checkpoints", async () => {
    assert.ok(handle);
    const before = await treeDigest(checkpointDir);
    const trainerSpec = { ...spec, validation: { ...spec.validation, runner: 'trainer' as const } };
    const input = {
      spec: trainerSpec,
      handle,
      checkpointPath: `${checkpointDir}/global_step_4`,
      outPath: join(dir, 'run', 'validation.json'),
    };
    byTrainer = await new MockActivityEnvironment().run(createValidate(deps()), input);
    assert.equal(byTrainer.runner, 'trainer');
    assert.equal(byTrainer.env_tag, 'CoordSokoban');
    assert.equal(byTrainer.step, 4);
    assert.equal(byTrainer.episodes, 24);
    assert.deepEqual(byTrainer.seeds, { first: 5000, last: 5023 });
    assert.deepEqual(Object.keys(byTrainer.pass_at_k ?? {}), ['1']);
    assert.ok(byTrainer.success_rate >= 0 && byTrainer.success_rate <= 1);
    assert.ok((byTrainer['entrypoint'] as string[]).includes('++trainer.val_only=True'));
    assert.deepEqual(
      JSON.parse(await readFile(input.outPath, 'utf8')),
      byTrainer,
      'validation.json holds the result',
    );
    assert.equal(await treeDigest(checkpointDir), before, 'the checkpoints are unchanged');
    // A retried activity finds the same job and writes the same bytes.
    assert.deepEqual(await new MockActivityEnvironment().run(createValidate(deps()), input), byTrainer);
  });

  it("the payload's runner plays the same levels greedily: the same success rate", async () => {
    assert.ok(handle);
    const input = {
      spec,
      handle: { ...handle, name: `${handle.name}-payload` },
      checkpointPath: `${checkpointDir}/global_step_4`,
      outPath: join(dir, 'run-payload', 'validation.json'),
    };
    // The renamed handle (its own submission id) has no token file: it talks to the same cluster.
    const token = await backend.dashboardToken(handle);
    const byPayload: ValidationResult = await new MockActivityEnvironment().run(
      createValidate({ ...deps(), rayHead: (url) => new RayDashboardClient(url, token) }),
      input,
    );
    assert.equal(byPayload.runner, 'payload');
    assert.equal(byPayload.env_tag, 'CoordSokoban');
    assert.deepEqual(byPayload.seeds, byTrainer.seeds);
    assert.equal(byPayload.episodes, 24);
    assert.equal(byPayload.success_rate, byTrainer.success_rate);
  });

  it('leaves no Ray process after the cluster is deleted', async () => {
    if (handle) await backend.deleteCluster(handle);
    handle = undefined;
    assert.deepEqual(await rayProcesses(), []);
  });
});
