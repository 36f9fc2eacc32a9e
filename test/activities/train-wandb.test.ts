import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createTrain } from '../../src/activities/train/train.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';
import { wandbJobEnv, wandbRunId } from '../../src/domain/tracking/wandb-env.js';
import { FakeRayHead, fakeBackend, readyCluster } from '../helpers/fake-ray-head.js';
import { testSpec } from '../helpers/specs.js';
import { waitUntil } from '../helpers/wait.js';

const handle: ClusterHandle = {
  backend: 'local',
  name: 'c-a0',
  dashboardUrl: 'http://stand-in',
  owner: { experiment: 'e', workflowId: 'w', runId: 'r', attempt: 0 },
};

function wandbSpec() {
  const spec = testSpec();
  spec.trainer.loggers = ['console', 'wandb'];
  spec.tracking = { wandb: { project: 'sokoban', entity: 'lab', mode: 'offline' } };
  return spec;
}

describe('W&B through the trainer', () => {
  it('a campaign attempt continues the campaign run; a sweep child is grouped by the sweep', () => {
    const spec = wandbSpec();
    assert.deepEqual(wandbJobEnv(spec, { workflowId: 'camp-7-a2', campaignId: 'camp-7' }), {
      WANDB_RUN_ID: 'camp-7',
      WANDB_RESUME: 'allow',
      WANDB_PROJECT: 'sokoban',
      WANDB_ENTITY: 'lab',
      WANDB_MODE: 'offline',
    });
    const child = wandbJobEnv(spec, { workflowId: 'sw-0-abc', sweepId: 'sw' });
    assert.equal(child.WANDB_RUN_ID, 'sw-0-abc');
    assert.equal(child.WANDB_RUN_GROUP, 'sw');
    assert.deepEqual(wandbJobEnv(testSpec(), { workflowId: 'x' }), {}, 'no wandb logger, no W&B env');
    assert.equal(wandbRunId('a/b c'), 'a-b-c');
    assert.ok(wandbRunId('x'.repeat(100)).length <= 64);
  });

  it("the job's env_vars carry the W&B ids and the worker's WANDB_API_KEY (local), the input never the key", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'train-wandb-'));
    const head = new FakeRayHead();
    const train = createTrain({
      backends: { local: fakeBackend(() => readyCluster(2, 2)) },
      rayHead: () => head,
      reportProgress: async () => undefined,
      workflowStatus: async () => undefined,
      pollIntervalMs: 20,
    });
    const before = process.env.WANDB_API_KEY;
    process.env.WANDB_API_KEY = 'wandb-secret-value-123';
    try {
      const input = {
        spec: wandbSpec(),
        handle,
        checkpointDir: dir,
        resume: { mode: 'disable' as const },
        wandb: { workflowId: 'camp-1-a1', campaignId: 'camp-1' },
      };
      const running = new MockActivityEnvironment().run(train, input);
      await waitUntil('the job submitted', () => head.submitted.length === 1);
      head.logs = 'step:20 - critic/score/mean:3\n';
      await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20');
      head.status = 'SUCCEEDED';
      await running;
      const env = head.envVars[0] ?? {};
      assert.equal(env.WANDB_RUN_ID, 'camp-1');
      assert.equal(env.WANDB_RESUME, 'allow');
      assert.equal(env.WANDB_API_KEY, 'wandb-secret-value-123');
      assert.ok(
        !JSON.stringify(input).includes('wandb-secret-value-123'),
        'the activity input (history) has no key',
      );
    } finally {
      if (before === undefined) delete process.env.WANDB_API_KEY;
      else process.env.WANDB_API_KEY = before;
    }
  });
});
