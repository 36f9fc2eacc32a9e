import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import {
  matchesNodeAffinity,
  summarize,
  violatesAntiAffinity,
} from '../helpers/kubelet-standin/scheduling.js';

const notIn = (values: string[]): V1Pod => ({
  spec: {
    containers: [],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values }] },
          ],
        },
      },
    },
  },
});

describe('stand-in scheduler predicates', () => {
  it('required node affinity: NotIn keeps a Pod off the named nodes only', () => {
    assert.equal(matchesNodeAffinity(notIn(['n3']), { 'kubernetes.io/hostname': 'n3' }), false);
    assert.equal(matchesNodeAffinity(notIn(['n3']), { 'kubernetes.io/hostname': 'n1' }), true);
    assert.equal(matchesNodeAffinity({ spec: { containers: [] } }, {}), true);
  });

  it('required pod anti-affinity by hostname: another selected Pod on the node refuses it', () => {
    const worker = (uid: string): V1Pod => ({
      metadata: { uid, labels: { 'ray.io/cluster': 'c', 'ray.io/node-type': 'worker' } },
      spec: {
        containers: [],
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { 'ray.io/cluster': 'c', 'ray.io/node-type': 'worker' } },
                topologyKey: 'kubernetes.io/hostname',
              },
            ],
          },
        },
      },
    });
    assert.equal(violatesAntiAffinity(worker('a'), [worker('b')]), true);
    assert.equal(violatesAntiAffinity(worker('a'), [worker('a')]), false);
    assert.equal(violatesAntiAffinity(worker('a'), []), false);
  });

  it('sums per-node reasons as kube-scheduler does', () => {
    assert.equal(
      summarize([
        "1 node(s) didn't match Pod's node affinity/selector",
        "1 node(s) didn't match Pod's node affinity/selector",
        '1 Insufficient nvidia.com/gpu',
      ]),
      "2 node(s) didn't match Pod's node affinity/selector, 1 Insufficient nvidia.com/gpu",
    );
  });
});
