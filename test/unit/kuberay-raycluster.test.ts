import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authSecretName, clusterOfAuthSecret } from '../../src/backends/kuberay/auth-secret.js';
import { dashboardFromStatus, interpretRayCluster } from '../../src/backends/kuberay/cluster-status.js';
import { kubeFailure } from '../../src/backends/kuberay/kube-errors.js';
import { DomainError } from '../../src/errors/domain-error.js';
import {
  LABELS,
  isOwnedBy,
  ownerAnnotations,
  ownerLabels,
  readOwner,
} from '../../src/backends/kuberay/labels.js';
import { buildRayCluster, type RayClusterObject } from '../../src/backends/kuberay/raycluster.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { kuberaySpec, kuberaySpecYaml, TEST_IMAGE } from '../helpers/kuberay-specs.js';

const owner = {
  experiment: 'sokoban-test',
  workflowId: 'sweep/2026-12-03T07:00:00Z/lr=1e-4 with spaces and more than sixty-three characters',
  runId: '0193a3b4-1111-7222-8333-444455556666',
  attempt: 1,
};

describe('RayCluster builder (pure)', () => {
  const rc = buildRayCluster({
    name: 'sokoban-test-abcd1234-a1',
    namespace: 'training',
    spec: kuberaySpec('/mnt/shared'),
    owner,
  });
  const spec = rc.spec as any; // eslint-disable-line @typescript-eslint/no-explicit-any

  it('sets rayVersion, a head with num-gpus 0 and the dashboard on all interfaces', () => {
    assert.equal(rc.apiVersion, 'ray.io/v1');
    assert.equal(spec.rayVersion, '2.60.0');
    assert.deepEqual(spec.headGroupSpec.rayStartParams, { 'num-gpus': '0', 'dashboard-host': '0.0.0.0' });
    assert.equal(spec.headGroupSpec.template.spec.containers[0].image, TEST_IMAGE);
  });

  it('pins worker replicas (replicas = min = max) with nvidia.com/gpu limits and the image by digest', () => {
    assert.equal(spec.workerGroupSpecs.length, 1);
    const g = spec.workerGroupSpecs[0];
    assert.deepEqual([g.groupName, g.replicas, g.minReplicas, g.maxReplicas], ['gpu-workers', 2, 2, 2]);
    assert.equal(g.template.spec.containers[0].resources.limits['nvidia.com/gpu'], '1');
    assert.match(g.template.spec.containers[0].image, /@sha256:[a-f0-9]{64}$/);
  });

  it('mounts the PVC at the spec path on head and workers', () => {
    for (const template of [spec.headGroupSpec.template, spec.workerGroupSpecs[0].template]) {
      assert.deepEqual(template.spec.volumes, [
        { name: 'ragen-storage', persistentVolumeClaim: { claimName: 'ragen-storage' } },
      ]);
      assert.deepEqual(template.spec.containers[0].volumeMounts, [
        { name: 'ragen-storage', mountPath: '/mnt/shared' },
      ]);
    }
  });

  it('labels experiment, workflow id (hashed: free text), run id and attempt; the full owner in an annotation', () => {
    const labels = rc.metadata.labels ?? {};
    assert.equal(labels[LABELS.experiment], 'sokoban-test');
    assert.equal(labels[LABELS.runId], owner.runId);
    assert.equal(labels[LABELS.attempt], '1');
    assert.match(labels[LABELS.workflowHash] ?? '', /^[a-f0-9]{32}$/);
    for (const value of Object.values(labels))
      assert.match(value, /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/);
    for (const value of Object.values(labels)) assert.ok(value.length <= 63);
    assert.deepEqual(readOwner(rc.metadata), { owner });
    assert.equal(
      spec.workerGroupSpecs[0].template.metadata.labels[LABELS.runId],
      owner.runId,
      'pods carry the owner labels too',
    );
  });

  it('carries no shell string: jobs are submitted through the Ray Jobs API with quoted arguments', () => {
    assert.doesNotMatch(JSON.stringify(rc), /ragen_toy|bash -c|sh -c/);
  });
});

describe('owner marks', () => {
  it('recognises its own cluster on a 409 and refuses another attempt or workflow', () => {
    const marks = { labels: ownerLabels(owner), annotations: ownerAnnotations(owner) };
    assert.ok(isOwnedBy(marks, owner));
    assert.ok(!isOwnedBy(marks, { ...owner, attempt: 2 }));
    assert.ok(!isOwnedBy(marks, { ...owner, workflowId: 'other' }));
  });

  it('reports missing, malformed or contradicting marks instead of an owner', () => {
    assert.match((readOwner({ labels: {} }) as { problem: string }).problem, /missing/);
    assert.match(
      (readOwner({ annotations: { 'ragen.dev/owner': '{' } }) as { problem: string }).problem,
      /not JSON/,
    );
    const labels = { ...ownerLabels(owner), [LABELS.attempt]: '7' };
    assert.match(
      (readOwner({ labels, annotations: ownerAnnotations(owner) }) as { problem: string }).problem,
      /does not match/,
    );
  });
});

const base = (
  status: RayClusterObject['status'],
  extra: Partial<RayClusterObject['metadata']> = {},
): RayClusterObject => ({
  apiVersion: 'ray.io/v1',
  kind: 'RayCluster',
  metadata: { name: 'c', generation: 1, ...extra },
  spec: {},
  status,
});

describe('RayCluster status reading', () => {
  it('is gone when the object is absent or being deleted', () => {
    assert.equal(interpretRayCluster(undefined, 'ns/c').phase, 'gone');
    assert.match(interpretRayCluster(undefined, 'ns/c').message, /deleted outside this workflow/);
    assert.equal(
      interpretRayCluster(base({}, { deletionTimestamp: '2026-12-03T00:00:00Z' }), 'ns/c').phase,
      'gone',
    );
  });

  it('ignores the deprecated sticky state: ready with the head not ready is pending', () => {
    const v = interpretRayCluster(
      base({
        state: 'ready',
        conditions: [{ type: 'HeadPodReady', status: 'False', reason: 'ContainersNotReady' }],
      }),
      'ns/c',
    );
    assert.equal(v.phase, 'pending');
    assert.match(v.message, /ContainersNotReady/);
  });

  it('shows ReplicaFailure with its reason and message as a failure', () => {
    const v = interpretRayCluster(
      base({
        conditions: [
          {
            type: 'ReplicaFailure',
            status: 'True',
            reason: 'FailedCreateWorkerPod',
            message: 'pods "w" is forbidden: exceeded quota',
          },
        ],
      }),
      'ns/c',
    );
    assert.equal(v.phase, 'failed');
    assert.match(v.message, /ReplicaFailure: FailedCreateWorkerPod: pods "w" is forbidden: exceeded quota/);
  });

  it('counts ready/desired workers (absent = 0) once HeadPodReady is True and the generation observed', () => {
    const v = interpretRayCluster(
      base({
        observedGeneration: 1,
        desiredWorkerReplicas: 2,
        conditions: [{ type: 'HeadPodReady', status: 'True' }],
      }),
      'ns/c',
    );
    assert.deepEqual(v.phase === 'head-ready' && [v.readyWorkers, v.desiredWorkers], [0, 2]);
    const stale = interpretRayCluster(
      base(
        { observedGeneration: 1, conditions: [{ type: 'HeadPodReady', status: 'True' }] },
        { generation: 2 },
      ),
      'ns/c',
    );
    assert.equal(stale.phase, 'pending');
  });

  it('builds the dashboard URL from head.podIP and endpoints.dashboard', () => {
    assert.equal(
      dashboardFromStatus(base({ head: { podIP: '10.1.2.3' }, endpoints: { dashboard: '8265' } })),
      'http://10.1.2.3:8265',
    );
    assert.equal(dashboardFromStatus(base({ head: { podIP: '10.1.2.3' } })), undefined);
  });
});

describe('Kubernetes status -> error type (one place)', () => {
  const action = { verb: 'create', resource: 'rayclusters.ray.io', namespace: 'training', name: 'c' };
  const apiError = (code: number, body: unknown) => Object.assign(new Error(`HTTP ${code}`), { code, body });

  it('403: non-retryable KubePermissionDenied naming verb and resource', () => {
    const f = kubeFailure(
      apiError(
        403,
        JSON.stringify({ message: 'rayclusters.ray.io is forbidden: User "u" cannot create resource' }),
      ),
      action,
    );
    assert.ok(f instanceof DomainError);
    assert.equal(f.type, 'KubePermissionDenied');
    assert.equal(f.permanent, true);
    assert.match(
      f.message,
      /cannot create rayclusters\.ray\.io\/c in namespace training; grant verb "create"/,
    );
  });

  it('401: non-retryable, points at the credentials', () => {
    const f = kubeFailure(apiError(401, { message: 'Unauthorized' }), action);
    assert.equal(f.type, 'KubePermissionDenied');
    assert.match(f.message, /credentials/);
  });

  it('422: non-retryable KubeInvalidObject naming the field', () => {
    const body = {
      reason: 'Invalid',
      message: 'RayCluster.ray.io "c" is invalid',
      details: { causes: [{ field: 'spec.workerGroupSpecs[0].replicas', message: 'must be >= 0' }] },
    };
    const f = kubeFailure(apiError(422, body), action);
    assert.equal(f.type, 'KubeInvalidObject');
    assert.equal(f.permanent, true);
    assert.match(f.message, /spec\.workerGroupSpecs\[0\]\.replicas: must be >= 0/);
  });

  it('429, 5xx and network errors: transient KubeApiUnavailable, which the activity retries', () => {
    for (const err of [
      apiError(429, {}),
      apiError(503, { message: 'etcd leader changed' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
    ]) {
      const f = kubeFailure(err, action);
      assert.equal(f.type, 'KubeApiUnavailable');
      assert.equal(f.permanent, false, f.message);
      assert.match(f.message, /retried/);
    }
  });
});

describe('kuberay spec fields (validated only for backend kuberay)', () => {
  const fieldsOf = (yaml: string) => {
    try {
      parseExperimentSpec(yaml);
    } catch (err) {
      assert.ok(err instanceof SpecError);
      return err.issues.map((i) => `${i.field}: ${i.message}`);
    }
    return [];
  };

  it('needs kuberay.storage for backend kuberay, and storage under its mount path', () => {
    assert.deepEqual(fieldsOf(kuberaySpecYaml('/mnt/shared')), []);
    const noBlock = kuberaySpecYaml('/mnt/shared').replace(/kuberay:\n(.*\n)*/, '');
    assert.match(fieldsOf(noBlock).join('\n'), /^kuberay: the kuberay backend needs kuberay\.storage\.pvc/m);
    const outside = kuberaySpecYaml('/mnt/shared').replace('mountPath: /mnt/shared', 'mountPath: /mnt/other');
    assert.match(
      fieldsOf(outside).join('\n'),
      /storage\.checkpointDir: must be under kuberay\.storage\.mountPath \(\/mnt\/other\)/,
    );
    const badPvc = kuberaySpecYaml('/mnt/shared').replace('pvc: ragen-storage', 'pvc: Bad_Name');
    assert.match(fieldsOf(badPvc).join('\n'), /kuberay\.storage\.pvc: a Kubernetes name/);
  });
});

describe('token Secret names', () => {
  it('map back to their cluster, and nothing else does (the reaper lists Secrets by label)', () => {
    assert.equal(clusterOfAuthSecret(authSecretName('exp-a1')), 'exp-a1');
    assert.equal(clusterOfAuthSecret('exp-a1-ray-auth'), 'exp-a1');
    assert.equal(clusterOfAuthSecret('-ray-auth'), undefined);
    assert.equal(clusterOfAuthSecret('exp-a1-wandb'), undefined);
  });
});
