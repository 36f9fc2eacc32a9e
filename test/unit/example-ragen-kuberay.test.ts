import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { trainArgv } from '../../src/domain/ragen/entrypoint.js';
import { loadExperimentSpec } from '../../src/cli/spec-files/load.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const EXAMPLE = new URL('../../examples/ragen-sokoban-kuberay.yaml', import.meta.url).pathname;

describe('examples/ragen-sokoban-kuberay.yaml (the Polyaxon component as a spec)', async () => {
  const spec = await loadExperimentSpec(EXAMPLE);
  const owner = { experiment: spec.name, workflowId: 'wf', runId: 'run', attempt: 0 };
  const rc = buildRayCluster({ name: 'ragen-sokoban-0123abcd-a0', namespace: 'training', spec, owner });
  const head = (rc.spec as any).headGroupSpec;
  const groups = (rc.spec as any).workerGroupSpecs;

  it('validates, on the kuberay backend with a 900 s join deadline', () => {
    assert.equal(spec.backend, 'kuberay');
    assert.equal(spec.deadlines.joinSeconds, 900);
  });

  it('has a CPU head and two one-GPU workers (replicas = min = max)', () => {
    assert.equal(head.rayStartParams['num-gpus'], '0');
    assert.equal(head.template.spec.containers[0].resources.limits['nvidia.com/gpu'], undefined);
    assert.equal(groups.length, 1);
    assert.deepEqual([groups[0].replicas, groups[0].minReplicas, groups[0].maxReplicas], [2, 2, 2]);
    assert.equal(groups[0].template.spec.containers[0].resources.limits['nvidia.com/gpu'], '1');
  });

  it('runs from /workspace/RAGEN with a sized /dev/shm and the storage at /mnt/ragen on every pod', () => {
    for (const template of [head.template, groups[0].template]) {
      const c = template.spec.containers[0];
      assert.equal(c.workingDir, '/workspace/RAGEN');
      assert.ok(c.volumeMounts.some((m: any) => m.mountPath === '/dev/shm'));
      assert.ok(
        template.spec.volumes.some((v: any) => v.emptyDir?.medium === 'Memory' && v.emptyDir.sizeLimit),
      );
      assert.ok(c.volumeMounts.some((m: any) => m.mountPath === '/mnt/ragen' && m.name === 'ragen-storage'));
    }
  });

  it("runs python train.py --config-name _2_sokoban with the component's overrides", () => {
    const argv = trainArgv(spec, '/mnt/ragen/checkpoints/ragen-sokoban/wf', { mode: 'disable' });
    assert.deepEqual(argv.slice(0, 4), ['python', 'train.py', '--config-name', '_2_sokoban']);
    for (const o of [
      '++ray_kwargs.ray_init.address=auto',
      'trainer.nnodes=2',
      'trainer.n_gpus_per_node=1',
      'trainer.default_local_dir=/mnt/ragen/checkpoints/ragen-sokoban/wf',
    ]) {
      assert.ok(argv.includes(o), `${o} in ${argv.join(' ')}`);
    }
    assert.ok(argv.some((a) => a.startsWith('trainer.logger=') && a.includes('console')));
  });
});
