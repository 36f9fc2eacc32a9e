import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import {
  containerEnv,
  containerIdentity,
  expand,
  podRequests,
  quantity,
} from '../helpers/kubelet-standin/pod-spec.js';
import { newRecord, podStatus } from '../helpers/kubelet-standin/pod-status.js';

/** The stand-in kubelet's pure parts: what it reads from a Pod spec and the status it writes. */
const pod: V1Pod = {
  metadata: { name: 'rc-head-x', namespace: 'ns', uid: 'u-1', labels: { 'ray.io/cluster': 'rc' } },
  spec: {
    nodeName: 'node',
    initContainers: [{ name: 'init', image: 'i', resources: { requests: { cpu: '200m', memory: '256Mi' } } }],
    containers: [
      {
        name: 'ray',
        image: 'i',
        resources: { limits: { cpu: '2', 'nvidia.com/gpu': '1' }, requests: { cpu: '1' } },
        env: [
          { name: 'A', value: 'a' },
          { name: 'B', value: '$(A)-b-$$(A)-$(MISSING)' },
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'CLUSTER', valueFrom: { fieldRef: { fieldPath: "metadata.labels['ray.io/cluster']" } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'token' } } },
        ],
        envFrom: [{ secretRef: { name: 's' }, prefix: 'S_' }],
      },
    ],
  },
  status: { podIP: '10.87.0.10' },
};

describe('stand-in kubelet: Pod spec readings', () => {
  it('reads quantities as Kubernetes writes them', () => {
    assert.equal(quantity('500m'), 0.5);
    assert.equal(quantity('2'), 2);
    assert.equal(quantity('4Gi'), 4 * 1024 ** 3);
    assert.equal(quantity('1k'), 1000);
    assert.throws(() => quantity('lots'), /not a quantity/);
  });

  it('requests: containers summed (limits where no request), init containers as a floor', () => {
    assert.deepEqual(podRequests(pod), { cpu: 1, 'nvidia.com/gpu': 1, memory: 256 * 1024 ** 2 });
  });

  it('expands $(VAR) from earlier variables, keeps unknown ones and $$ escapes', () => {
    assert.equal(expand('$(A)/$(B)/$$(A)', { A: '1', B: '2' }), '1/2/$(A)');
  });

  it('builds the environment: envFrom, values, fieldRef, resourceFieldRef, secretKeyRef', async () => {
    const sources = {
      secret: async (name: string) => (name === 's' ? { token: 't0k' } : undefined),
      configMap: async () => undefined,
    };
    const env = await containerEnv(pod, pod.spec!.containers[0]!, { PATH: '/bin' }, sources);
    assert.deepEqual(env, {
      PATH: '/bin',
      S_token: 't0k',
      A: 'a',
      B: 'a-b-$(A)-$(MISSING)',
      NAME: 'rc-head-x',
      CLUSTER: 'rc',
      IP: '10.87.0.10',
      CPU: '2',
      TOKEN: 't0k',
    });
    const missing = { ...sources, secret: async () => undefined };
    await assert.rejects(containerEnv(pod, pod.spec!.containers[0]!, {}, missing), /secret "s" not found/);
  });

  it('writes conditions and container states from what it knows', () => {
    const r = newRecord([{ name: 'init', image: 'i' }], [{ name: 'ray', image: 'i' }], '10.87.0.1');
    let s = podStatus(r, 'u-1');
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(
      s.conditions?.map((c) => `${c.type}=${c.status}`),
      ['PodScheduled=True', 'Initialized=False', 'ContainersReady=False', 'Ready=False'],
    );
    assert.equal(s.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
    r.initContainers[0]!.state = { terminated: { exitCode: 0, reason: 'Completed' } };
    r.containers[0]!.state = { running: { startedAt: new Date() } };
    r.containers[0]!.ready = true;
    r.phase = 'Running';
    s = podStatus(r, 'u-1');
    assert.deepEqual(
      s.conditions?.map((c) => `${c.type}=${c.status}`),
      ['PodScheduled=True', 'Initialized=True', 'ContainersReady=True', 'Ready=True'],
    );
    assert.equal(s.containerStatuses?.[0]?.started, true);
  });
});

describe('stand-in kubelet: who a container runs as', () => {
  const c = { name: 'ray', image: 'i' };
  it("the image's user (uid 1000, gid 100, as rayproject images) when nothing is set", () => {
    assert.deepEqual(containerIdentity({ spec: { containers: [c] } }, c), {
      uid: 1000,
      gid: 100,
      groups: [],
    });
  });
  it("the Pod's runAsUser/runAsGroup, fsGroup and supplementalGroups as groups; the container's own over the Pod's", () => {
    const pod: V1Pod = {
      spec: {
        securityContext: {
          runAsUser: 2000,
          runAsGroup: 3000,
          fsGroup: 4000,
          supplementalGroups: [5000, 3000],
        },
        containers: [c],
      },
    };
    assert.deepEqual(containerIdentity(pod, c), { uid: 2000, gid: 3000, groups: [4000, 5000] });
    assert.deepEqual(containerIdentity(pod, { ...c, securityContext: { runAsUser: 0 } }), {
      uid: 0,
      gid: 3000,
      groups: [4000, 5000],
    });
  });
});
