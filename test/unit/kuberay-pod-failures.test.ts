import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpretRayCluster } from '../../src/backends/kuberay/cluster-status.js';
import { type PodLike, podFailures, podsWaiting } from '../../src/backends/kuberay/pod-failures.js';
import { storageCheck } from '../../src/backends/kuberay/preflight.js';
import type { RayClusterObject } from '../../src/backends/kuberay/raycluster.js';

const IMAGE = `registry.example/ragen@sha256:${'b'.repeat(64)}`;

/** A worker Pod as KubeRay v1.5 makes it and the kubelet reports it: wait-gcs-ready init container, ray-worker. */
function workerPod(status: PodLike['status'], name = 'c-gpu-workers-worker-x7k2p'): PodLike {
  return {
    metadata: { name, labels: { 'ray.io/cluster': 'c', 'ray.io/node-type': 'worker' } },
    spec: {
      initContainers: [{ name: 'wait-gcs-ready', image: IMAGE }],
      containers: [{ name: 'ray-worker', image: IMAGE }],
    },
    status,
  };
}

describe('podFailures (Pod status as the kubelet writes it)', () => {
  it('ErrImagePull / ImagePullBackOff / InvalidImageName: ImagePullFailed naming the image and the fix', () => {
    for (const reason of ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName']) {
      const pod = workerPod({
        phase: 'Pending',
        initContainerStatuses: [
          {
            name: 'wait-gcs-ready',
            image: IMAGE,
            restartCount: 0,
            state: {
              waiting: {
                reason,
                message: `Back-off pulling image "${IMAGE}": failed to resolve reference: 401 Unauthorized`,
              },
            },
          },
        ],
        containerStatuses: [
          {
            name: 'ray-worker',
            image: IMAGE,
            restartCount: 0,
            state: { waiting: { reason: 'PodInitializing' } },
          },
        ],
      });
      const [f, ...rest] = podFailures([pod]);
      assert.equal(rest.length, 0);
      assert.equal(f?.type, 'ImagePullFailed');
      assert.equal(f?.container, 'wait-gcs-ready');
      assert.ok(f?.message.includes(`cannot pull image ${IMAGE}`), f?.message);
      assert.match(f?.message ?? '', new RegExp(`${reason}: Back-off pulling image`));
      assert.match(f?.message ?? '', /kuberay\.imagePullSecrets/);
    }
  });

  it('CrashLoopBackOff: PodCrashLooping naming the container, restarts and the last exit code', () => {
    const pod = workerPod({
      phase: 'Running',
      initContainerStatuses: [
        {
          name: 'wait-gcs-ready',
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed' } },
        },
      ],
      containerStatuses: [
        {
          name: 'ray-worker',
          restartCount: 4,
          state: {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: 'back-off 1m20s restarting failed container=ray-worker',
            },
          },
          lastState: {
            terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2026-12-03T21:00:00Z' },
          },
        },
      ],
    });
    const [f] = podFailures([pod]);
    assert.equal(f?.type, 'PodCrashLooping');
    assert.equal(f?.container, 'ray-worker');
    assert.match(
      f?.message ?? '',
      /pod c-gpu-workers-worker-x7k2p, container ray-worker is crash-looping \(restarted 4 times, last exit code 137 \(OOMKilled\)\)/,
    );
    assert.match(f?.message ?? '', /kubectl logs c-gpu-workers-worker-x7k2p -c ray-worker --previous/);
  });

  it('no ray on the PATH: the first exit 127 (of wait-gcs-ready here) is ImageContractUnmet naming bash, wget and ray', () => {
    const pod = workerPod({
      phase: 'Pending',
      initContainerStatuses: [
        {
          name: 'wait-gcs-ready',
          restartCount: 0,
          state: { terminated: { exitCode: 127, reason: 'Error' } },
        },
      ],
    });
    const [f] = podFailures([pod]);
    assert.equal(f?.type, 'ImageContractUnmet');
    assert.equal(f?.container, 'wait-gcs-ready');
    assert.match(
      f?.message ?? '',
      /init container wait-gcs-ready: it exited 127, a command not found on the image's PATH/,
    );
    assert.match(f?.message ?? '', /the image needs bash, wget and ray on its default PATH/);
  });

  it('no bash in the image: the runtime cannot start the container, named at once', () => {
    const message =
      'failed to create containerd task: exec: "/bin/bash": stat /bin/bash: no such file or directory: unknown';
    const pod = workerPod({
      phase: 'Running',
      containerStatuses: [
        {
          name: 'ray-worker',
          restartCount: 0,
          state: { terminated: { exitCode: 128, reason: 'StartError', message } },
        },
      ],
    });
    const [f] = podFailures([pod]);
    assert.equal(f?.type, 'ImageContractUnmet');
    assert.match(
      f?.message ?? '',
      /could not start it \(StartError: failed to create containerd task: exec: "\/bin\/bash"/,
    );
    // A StartError for another cause (and a plain failed exit) is not read as a missing executable.
    const other = workerPod({
      phase: 'Running',
      containerStatuses: [
        {
          name: 'ray-worker',
          restartCount: 1,
          state: { terminated: { exitCode: 128, reason: 'StartError', message: 'cgroup error' } },
        },
      ],
    });
    assert.deepEqual(podFailures([other]), []);
  });

  it('counts repeated failed exits as a loop even while the container reads running between back-offs', () => {
    const running = (restartCount: number, exitCode: number) =>
      workerPod({
        phase: 'Running',
        containerStatuses: [
          {
            name: 'ray-worker',
            restartCount,
            state: { running: {} },
            lastState: { terminated: { exitCode, reason: 'Error' } },
          },
        ],
      });
    assert.equal(podFailures([running(3, 1)])[0]?.type, 'PodCrashLooping');
    assert.deepEqual(podFailures([running(1, 1)]), [], 'one restart is not a loop');
    assert.deepEqual(podFailures([running(5, 0)]), [], 'clean exits are not failures');
  });

  it('CreateContainerConfigError (a missing Secret): PodConfigInvalid with the kubelet message', () => {
    const pod = workerPod({
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'ray-worker',
          restartCount: 0,
          state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "wandb" not found' } },
        },
      ],
    });
    const [f] = podFailures([pod]);
    assert.equal(f?.type, 'PodConfigInvalid');
    assert.match(f?.message ?? '', /secret "wandb" not found.*kuberay\.env/);
  });

  it('healthy, starting and deleted pods are not failures', () => {
    const healthy = workerPod({
      phase: 'Running',
      containerStatuses: [
        { name: 'ray-worker', restartCount: 0, state: { running: { startedAt: '2026-12-03T21:00:00Z' } } },
      ],
    });
    const starting = workerPod({
      phase: 'Pending',
      containerStatuses: [{ name: 'ray-worker', state: { waiting: { reason: 'ContainerCreating' } } }],
    });
    const deleted: PodLike = {
      ...workerPod({
        containerStatuses: [{ name: 'ray-worker', state: { waiting: { reason: 'ImagePullBackOff' } } }],
      }),
      metadata: { name: 'gone', deletionTimestamp: '2026-12-03T21:00:00Z' },
    };
    assert.deepEqual(podFailures([healthy, starting, deleted, {}]), []);
  });

  it('says why a pending pod waits (unschedulable), for the join message', () => {
    const pod = workerPod({
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.',
        },
      ],
    });
    assert.deepEqual(podsWaiting([pod]), [
      'pod c-gpu-workers-worker-x7k2p not scheduled (Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.)',
    ]);
  });
});

const cluster = (
  spec: Record<string, unknown>,
  status: RayClusterObject['status'],
  labels: Record<string, string> = {},
): RayClusterObject => ({
  apiVersion: 'ray.io/v1',
  kind: 'RayCluster',
  metadata: { name: 'c', generation: 1, labels },
  spec,
  status,
});

describe('RayCluster suspended by Kueue, and ReplicaFailure', () => {
  it('a suspended cluster (spec.suspend or RayClusterSuspended) is queued, naming the queue: waiting, not failed', () => {
    const v = interpretRayCluster(
      cluster(
        { suspend: true },
        {
          state: 'suspended',
          conditions: [{ type: 'RayClusterSuspended', status: 'True', reason: 'RayClusterSuspended' }],
        },
        { 'kueue.x-k8s.io/queue-name': 'team-gpus' },
      ),
      'ns/c',
    );
    assert.equal(v.phase, 'queued');
    assert.match(
      v.message,
      /suspended \(RayClusterSuspended\), waiting for Kueue to admit it from queue team-gpus/,
    );
    assert.equal(
      interpretRayCluster(cluster({ suspend: true }, {}), 'ns/c').phase,
      'queued',
      'Kueue set suspend before the operator wrote status',
    );
    const suspending = interpretRayCluster(
      cluster({}, { conditions: [{ type: 'RayClusterSuspending', status: 'True' }] }),
      'ns/c',
    );
    assert.equal(suspending.phase, 'queued');
  });

  it('a resumed cluster (RayClusterSuspended False, suspend false) is read as usual', () => {
    const v = interpretRayCluster(
      cluster(
        { suspend: false },
        {
          conditions: [
            { type: 'RayClusterSuspended', status: 'False' },
            { type: 'HeadPodReady', status: 'False', reason: 'ContainersNotReady' },
          ],
        },
      ),
      'ns/c',
    );
    assert.equal(v.phase, 'pending');
  });

  it('ReplicaFailure fails with its own error type and keeps the reason', () => {
    const v = interpretRayCluster(
      cluster(
        {},
        {
          conditions: [
            {
              type: 'ReplicaFailure',
              status: 'True',
              reason: 'FailedCreateWorkerPod',
              message: 'pods "w" is forbidden: exceeded quota: gpu-quota',
            },
          ],
        },
      ),
      'ns/c',
    );
    assert.equal(v.phase, 'failed');
    assert.equal(v.phase === 'failed' && v.failureType, 'ReplicaFailure');
    assert.match(
      v.message,
      /ReplicaFailure: FailedCreateWorkerPod: pods "w" is forbidden: exceeded quota: gpu-quota/,
    );
  });
});

describe('storage PVC preflight', () => {
  it('refuses a claim that is not ReadWriteMany, naming the claim, its modes and the fix', () => {
    const c = storageCheck('ragen-storage', 'training', { phase: 'Bound', accessModes: ['ReadWriteOnce'] });
    assert.equal(c.ok, false);
    assert.match(
      c.detail,
      /PersistentVolumeClaim ragen-storage has access modes \[ReadWriteOnce\], not ReadWriteMany.*create a ReadWriteMany claim.*kuberay\.storage\.pvc/,
    );
  });

  it('accepts ReadWriteMany and refuses a missing claim', () => {
    assert.equal(storageCheck('s', 'ns', { phase: 'Bound', accessModes: ['ReadWriteMany'] }).ok, true);
    const missing = storageCheck('s', 'ns', undefined);
    assert.equal(missing.ok, false);
    assert.match(missing.detail, /does not exist in namespace ns/);
  });
});
