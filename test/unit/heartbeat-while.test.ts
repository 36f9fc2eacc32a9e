import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { heartbeatWhile } from '../../src/activities/common/heartbeat-loop.js';
import { createSubmitCluster } from '../../src/activities/cluster/submit.js';
import { createTeardown } from '../../src/activities/cluster/teardown.js';
import type { ComputeBackend } from '../../src/backends/backend.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';
import { inActivityContext } from '../helpers/activity-context.js';
import { testSpec } from '../helpers/specs.js';
import { fakeBackend, readyCluster } from '../helpers/fake-ray-head.js';

// Found by the soak: a worker killed while a cluster started was noticed only at the submit
// activity's start-to-close timeout (5 min). Both cluster activities now heartbeat while they wait.
const handle: ClusterHandle = {
  backend: 'local',
  name: 'hb',
  owner: { experiment: 'hb', workflowId: 'w', runId: 'r', attempt: 0 },
};

/** A stand-in backend whose cluster start and deletion take `ms`. */
function slowBackend(ms: number): ComputeBackend {
  return {
    ...fakeBackend(() => readyCluster(1, 1)),
    createCluster: async () => (await sleep(ms), handle),
    deleteCluster: async () => (await sleep(ms), { alreadyGone: false }),
  };
}

describe('cluster start and teardown heartbeat while they wait (stand-in backend)', () => {
  it('heartbeatWhile beats at once and every interval until the work settles, then stops', async () => {
    const { run, heartbeats } = inActivityContext(() =>
      heartbeatWhile(
        sleep(260).then(() => 'done'),
        50,
      ),
    );
    assert.equal(await run(), 'done');
    const beats = heartbeats.length;
    // 6 on an idle machine; a loaded one fires timers late (fewer beats), never early.
    assert.ok(beats >= 2 && beats <= 7, `${beats} heartbeats over 260 ms at 50 ms`);
    await sleep(150);
    assert.equal(heartbeats.length, beats, 'no heartbeat after the work settled');
  });

  it('passes a failure through and stops beating', async () => {
    const { run, heartbeats } = inActivityContext(() =>
      heartbeatWhile(
        sleep(60).then(() => Promise.reject(new Error('node failed'))),
        20,
      ),
    );
    await assert.rejects(run(), /node failed/);
    const beats = heartbeats.length;
    await sleep(80);
    assert.equal(heartbeats.length, beats);
  });

  it('submitCluster and teardown heartbeat during a slow cluster start and deletion', async () => {
    const deps = {
      backends: { local: slowBackend(5_600) },
    } as unknown as Parameters<typeof createSubmitCluster>[0];
    const submit = inActivityContext(createSubmitCluster(deps));
    const teardown = inActivityContext(createTeardown(deps));
    const spec = testSpec({}, '/tmp/hb-storage');
    // Both at once (two activity contexts, each its own heartbeats): one 5.6 s wait, not two.
    const [submitted, tornDown] = await Promise.all([
      submit.run({ spec, name: 'hb', owner: handle.owner }),
      teardown.run({ handle }),
    ]);
    assert.deepEqual(submitted, handle);
    assert.ok(submit.heartbeats.length >= 2, `submit: ${submit.heartbeats.length} heartbeats in 5.6 s`);
    assert.deepEqual(tornDown, { alreadyGone: false });
    assert.ok(teardown.heartbeats.length >= 2, `teardown: ${teardown.heartbeats.length} heartbeats in 5.6 s`);
  });
});
