import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPreflight } from '../../src/activities/preflight/preflight.js';
import { checkpointSpaceWarning, expectedSaves } from '../../src/domain/checkpoints/checkpoint-space.js';
import { fakeBackend, FakeRayHead, readyCluster } from '../helpers/fake-ray-head.js';
import { testSpec } from '../helpers/specs.js';

describe('checkpoint space', () => {
  it('counts the saves of a run (every saveFreq and the last step), also from a resumed step', () => {
    assert.equal(expectedSaves({ totalTrainingSteps: 200, saveFreq: 100 }), 2);
    assert.equal(expectedSaves({ totalTrainingSteps: 25, saveFreq: 10 }), 3);
    assert.equal(expectedSaves({ totalTrainingSteps: 25, saveFreq: 10 }, 10), 2);
    assert.equal(expectedSaves({ totalTrainingSteps: 20, saveFreq: 10 }, 20), 0);
  });

  it('warns when the free space is below saves x checkpoint size, naming both', () => {
    assert.equal(checkpointSpaceWarning(2, 30e9, 100e9, '/ckpt'), undefined);
    assert.match(
      checkpointSpaceWarning(4, 30e9, 100e9, '/ckpt') ?? '',
      /\/ckpt has 100\.00 GB free, below the 120\.00 GB the run's 4 checkpoints of ~30\.00 GB need/,
    );
  });

  it('preflight passes with a warning when the spec says checkpoints will not fit', async () => {
    const root = await mkdtemp(join(tmpdir(), 'space-'));
    const spec = testSpec({}, root);
    spec.storage.checkpointSizeGb = 1e9; // an exabyte per checkpoint: no disk here holds it
    const deps = {
      backends: { local: fakeBackend(() => readyCluster(2, 2)) },
      rayHead: () => new FakeRayHead(),
      reportProgress: async () => undefined,
      workflowStatus: async () => undefined,
      pollIntervalMs: 10,
    };
    const { checks } = (await new MockActivityEnvironment().run(createPreflight(deps), { spec })) as {
      checks: { name: string; ok: boolean; detail: string }[];
    };
    const space = checks.find((c) => c.name.startsWith('checkpoint-space:'));
    assert.equal(space?.ok, true);
    assert.match(space?.detail ?? '', /^warning: .* free, below the .* the run's 2 checkpoints/);
    await rm(root, { recursive: true, force: true });
  });
});
