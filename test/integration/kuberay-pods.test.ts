import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { KubeClients } from '../../src/backends/kuberay/kube-client/clients.js';
import { loadKubeConfig } from '../../src/backends/kuberay/kube-config.js';
import { RayPodCache } from '../../src/backends/kuberay/pod-cache.js';
import { podFailures } from '../../src/backends/kuberay/pod-failures.js';
import { probeFailures } from '../../src/backends/kuberay/probe-failures.js';
import { kuberayPreflight } from '../../src/backends/kuberay/preflight.js';
import { type KubeEnv, startKubeEnv } from '../helpers/kube-env.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';

/**
 * The kuberay backend's reading of Pods against a real kube-apiserver: one list and one watch per
 * cluster (no GET per poll), status as a kubelet writes it through pods/status, and the PVC
 * access-mode check. The Pods here are never scheduled (a nodeSelector no node has), so their
 * status is only what this test writes, standing in for a kubelet that cannot pull the image.
 */
let kube: KubeEnv;
let core: CoreV1Api;
const ns = 'ragen-pods';
const IMAGE = `127.0.0.1:5999/ragen@sha256:${'c'.repeat(64)}`;

before(async () => {
  kube = await startKubeEnv({ namespace: ns });
  core = kube.admin.makeApiClient(CoreV1Api);
});
after(async () => {
  await kube?.stop();
});

async function createPod(name: string, cluster: string): Promise<V1Pod> {
  return core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name, labels: { 'ray.io/cluster': cluster, 'ray.io/node-type': 'worker' } },
      spec: {
        nodeSelector: { 'ragen.dev/no-such-node': 'true' },
        containers: [{ name: 'ray-worker', image: IMAGE }],
      },
    },
  });
}

describe('Ray pods through a watch (real kube-apiserver)', () => {
  it('reads a pull failure the kubelet reports, through the watch: no request per read', async () => {
    const clients = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns);
    const cache = new RayPodCache(clients.pods);
    try {
      await createPod('pf-worker-1', 'pf');
      await createPod('other-worker-1', 'other');
      const first = await cache.get('pf');
      assert.deepEqual(
        first?.map((p) => p.metadata?.name),
        ['pf-worker-1'],
        'only this cluster’s pods',
      );
      assert.deepEqual(podFailures(first ?? []), []);
      assert.equal(clients.transport.requests, 2, 'one list and one watch');

      // As a kubelet does: JSON patch of the status, no resourceVersion to conflict on.
      await core.patchNamespacedPodStatus({
        name: 'pf-worker-1',
        namespace: ns,
        body: [
          { op: 'add', path: '/status/phase', value: 'Pending' },
          {
            op: 'add',
            path: '/status/containerStatuses',
            value: [
              {
                name: 'ray-worker',
                image: IMAGE,
                imageID: '',
                ready: false,
                restartCount: 0,
                state: {
                  waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${IMAGE}"` },
                },
              },
            ],
          },
        ],
      });

      let failures = podFailures((await cache.get('pf')) ?? []);
      for (let i = 0; i < 50 && failures.length === 0; i++) {
        await sleep(100);
        failures = podFailures((await cache.get('pf')) ?? []);
      }
      assert.equal(failures[0]?.type, 'ImagePullFailed');
      assert.ok(failures[0]?.message.includes(`cannot pull image ${IMAGE}`));
      assert.equal(clients.transport.requests, 2, 'every read after the first came from the watch');

      await core.deleteNamespacedPod({ name: 'pf-worker-1', namespace: ns, gracePeriodSeconds: 0 });
      let left = await cache.get('pf');
      for (let i = 0; i < 50 && left?.length; i++) {
        await sleep(100);
        left = await cache.get('pf');
      }
      assert.deepEqual(left, [], 'a deleted pod leaves the cache');
    } finally {
      cache.close();
    }
  });

  it('a probe that cannot run wget, as the kubelet records it: one list call names wget and the Pod', async () => {
    const clients = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns);
    const pod = await createPod('pe-head-1', 'pe');
    const event = (reason: string, message: string, kind = 'Pod') =>
      core.createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { generateName: 'pe-head-1.', namespace: ns },
          involvedObject: {
            kind,
            apiVersion: 'v1',
            namespace: ns,
            name: 'pe-head-1',
            uid: pod.metadata?.uid,
            fieldPath: 'spec.containers{ray-head}',
          },
          reason,
          type: 'Warning',
          message,
          source: { component: 'kubelet' },
        },
      });
    await event('Unhealthy', 'Readiness probe failed: bash: line 1: wget: command not found');
    await event('BackOff', 'Back-off restarting failed container ray-head');
    await event('Unhealthy', 'Readiness probe failed: bash: line 1: wget: command not found', 'Node');
    const before = clients.transport.requests;
    const events = await clients.pods.probeEvents();
    assert.equal(clients.transport.requests - before, 1, 'one list call');
    // The field selector (kind Pod, reason Unhealthy) is applied by the API server itself.
    assert.deepEqual(
      events.map((e) => [e.reason, e.involvedObject?.kind]),
      [['Unhealthy', 'Pod']],
    );
    const [failure, ...more] = probeFailures(events);
    assert.equal(more.length, 0);
    assert.equal(failure?.type, 'ImageContractUnmet');
    assert.equal(failure?.pod, 'pe-head-1');
    assert.match(failure!.message, /cannot run wget/);
  });

  it('an identity that may not list pods gets no pods, asked once', async () => {
    const clients = new KubeClients(loadKubeConfig(kube.restrictedKubeconfig), ns);
    const cache = new RayPodCache(clients.pods);
    assert.equal(await cache.get('pf'), undefined);
    assert.equal(await cache.get('pf'), undefined);
    assert.equal(clients.transport.requests, 1);
    cache.close();
  });
});

describe('storage PVC access modes (real kube-apiserver)', () => {
  it('preflight refuses a ReadWriteOnce claim and accepts the ReadWriteMany one', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'rwo-claim' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const clients = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns);
    const check = async (pvc: string) =>
      (await kuberayPreflight(clients, kuberaySpec('/tmp/ragen-pods', pvc))).find(
        (c) => c.name === 'kuberay-storage-pvc',
      );
    const rwo = await check('rwo-claim');
    assert.equal(rwo?.ok, false);
    assert.match(
      rwo?.detail ?? '',
      /PersistentVolumeClaim rwo-claim has access modes \[ReadWriteOnce\], not ReadWriteMany/,
    );
    const rwx = await check(kube.pvc);
    assert.equal(rwx?.ok, true, rwx?.detail);
    assert.match(rwx?.detail ?? '', /ReadWriteMany/);
  });
});
