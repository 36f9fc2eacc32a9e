import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type WorkloadObject, queuePosition } from '../../src/backends/kuberay/kueue-workloads.js';

const workload = (
  cluster: string,
  created: string,
  opts: { queue?: string; priority?: number; reserved?: boolean; finished?: boolean } = {},
): WorkloadObject => ({
  metadata: {
    name: `raycluster-${cluster}-x`,
    creationTimestamp: created,
    ownerReferences: [{ kind: 'RayCluster', name: cluster }],
  },
  spec: { queueName: opts.queue ?? 'ragen', priority: opts.priority ?? 0 },
  status: {
    conditions: [
      ...(opts.reserved ? [{ type: 'QuotaReserved', status: 'True' }] : []),
      ...(opts.finished ? [{ type: 'Finished', status: 'True' }] : []),
    ],
  },
});

describe('queuePosition: a RayCluster’s place among its LocalQueue’s pending Workloads', () => {
  const running = workload('running', '2026-12-06T10:00:00Z', { reserved: true });
  it('behind none: 1; the admitted and finished ones are not counted', () => {
    const done = workload('done', '2026-12-06T09:00:00Z', { finished: true });
    const mine = workload('mine', '2026-12-06T10:00:05Z');
    assert.equal(queuePosition([running, done, mine], 'mine'), 1);
  });
  it('older first at equal priority; higher priority first whatever its age; other queues ignored', () => {
    const older = workload('older', '2026-12-06T10:00:01Z');
    const mine = workload('mine', '2026-12-06T10:00:05Z');
    const younger = workload('younger', '2026-12-06T10:00:09Z');
    const urgent = workload('urgent', '2026-12-06T10:00:10Z', { priority: 1000 });
    const elsewhere = workload('elsewhere', '2026-12-06T09:59:00Z', { queue: 'other' });
    const all = [running, younger, urgent, mine, older, elsewhere];
    assert.equal(queuePosition(all, 'mine'), 3);
    assert.equal(queuePosition(all, 'urgent'), 1);
    assert.equal(queuePosition(all, 'younger'), 4);
  });
  it('undefined when admitted or when Kueue has made no Workload yet', () => {
    assert.equal(queuePosition([running], 'running'), undefined);
    assert.equal(queuePosition([running], 'unknown'), undefined);
  });
});
