import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { KubeApi, loadKubeConfig } from '../../src/backends/kuberay/kube-api.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { MANAGED_SELECTOR, ownerLabels } from '../../src/backends/kuberay/labels.js';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { loadConfig } from '../../src/config.js';
import type { ReaperReport } from '../../src/domain/reaper.js';
import { activityDeps } from '../../src/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import type { reaper } from '../../src/workflows/reaper.js';
import { type KubeEnv, startKubeEnv } from '../helpers/kube-env.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * The kuberay backend's lifecycle against a real kube-apiserver (etcd + kube-apiserver from their
 * Go modules). This namespace has no operator: these tests are about the custom resource and the
 * API's answers, not about Ray (experiment-kuberay.test.ts runs Ray behind the stand-in).
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
const ns = 'ragen-lifecycle';
const owner = (attempt = 0, workflowId = 'wf-lifecycle') => ({ experiment: 'sokoban-test', workflowId, runId: '0193a3b4-1111-7222-8333-444455556666', attempt });
const backendFor = (kubeconfig: string) => new KubeRayBackend({ namespace: ns, kubeconfig, dashboard: 'service', python: 'python', pollMs: 200 });

before(async () => {
  kube = await startKubeEnv({ namespace: ns });
  console.log(`# kube env warm start: ${(kube.startMs / 1000).toFixed(1)} s`);
  env = await devServerEnv();
});
after(async () => {
  await env?.teardown();
  await kube?.stop();
});

describe('kuberay backend against a real kube-apiserver', () => {
  it('a retried create leaves one cluster; a second attempt name clash is refused; delete is idempotent', async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const request = { name: 'idem-a0', spec, owner: owner() };
    const first = await backend.createCluster(request);
    const second = await backend.createCluster(request);
    assert.deepEqual(second, first);
    assert.equal(first.dashboardUrl, `http://idem-a0-head-svc.${ns}.svc:8265`);
    const listed = await backend.api.listRayClusters(MANAGED_SELECTOR);
    assert.deepEqual(listed.map((c) => c.metadata.name), ['idem-a0']);
    await assert.rejects(backend.createCluster({ ...request, owner: owner(0, 'another-workflow') }), (err: DomainError) => {
      assert.equal(err.type, 'ClusterNameTaken');
      assert.equal(err.permanent, true);
      return true;
    });
    assert.deepEqual(await backend.deleteCluster(first), { alreadyGone: false });
    assert.equal(await backend.api.getRayCluster('idem-a0'), undefined, 'delete polls until the object is gone');
    assert.deepEqual(await backend.deleteCluster(first), { alreadyGone: true });
    backend.close();
  });

  it('a restricted identity gets a non-retryable error naming the missing permission, at preflight and at create', async () => {
    const restricted = backendFor(kube.restrictedKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const checks = await restricted.preflight(spec);
    const perms = checks.find((c) => c.name === 'kuberay-permissions');
    assert.equal(perms?.ok, false);
    assert.match(perms?.detail ?? '', /cannot create, delete rayclusters\.ray\.io in namespace ragen-lifecycle/);
    assert.equal(checks.find((c) => c.name === 'kuberay-crd')?.ok, true, JSON.stringify(checks));
    assert.match(checks.find((c) => c.name === 'kuberay-storage-pvc')?.detail ?? '', /cannot get persistentvolumeclaims\/ragen-storage/);
    await assert.rejects(restricted.createCluster({ name: 'denied-a0', spec, owner: owner() }), (err: DomainError) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.type, 'KubePermissionDenied');
      assert.equal(err.permanent, true);
      assert.match(err.message, /cannot create rayclusters\.ray\.io\/denied-a0 in namespace ragen-lifecycle; grant verb "create"/);
      assert.match(err.message, /system:serviceaccount:ragen-lifecycle:ragen-restricted/);
      return true;
    });
  });

  it('preflight passes for the admin: CRD, permissions, GPU capacity from the nodes, the PVC; refuses a missing PVC and too few GPUs', async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const ok = await backend.preflight(kuberaySpec('/tmp/ragen-lifecycle', kube.pvc));
    assert.deepEqual(ok.filter((c) => !c.ok), [], JSON.stringify(ok));
    const bad = await backend.preflight(kuberaySpec('/tmp/ragen-lifecycle', 'no-such-pvc'));
    assert.match(bad.find((c) => c.name === 'kuberay-storage-pvc')?.detail ?? '', /PersistentVolumeClaim no-such-pvc does not exist in namespace ragen-lifecycle/);
    const big = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    big.cluster.workerGroups[0]!.replicas = 4;
    const gpu = (await backend.preflight(big)).find((c) => c.name === 'kuberay-gpu-capacity');
    assert.equal(gpu?.ok, false);
    assert.match(gpu?.detail ?? '', /2 allocatable nvidia\.com\/gpu on 1 schedulable nodes, 4 requested/);
    big.kuberay!.gpuCapacity = 'warn';
    const warned = (await backend.preflight(big)).find((c) => c.name === 'kuberay-gpu-capacity');
    assert.equal(warned?.ok, true);
    assert.match(warned?.detail ?? '', /WARNING/);
  });

  it('an object the API rejects (422) fails once, non-retryable, naming the field', async () => {
    const api = new KubeApi(loadKubeConfig(kube.adminKubeconfig), ns);
    const body = buildRayCluster({ name: 'invalid-a0', namespace: ns, spec: kuberaySpec('/tmp/ragen-lifecycle', kube.pvc), owner: owner() });
    delete (body.spec['workerGroupSpecs'] as Record<string, unknown>[])[0]!['groupName'];
    const before = api.requests;
    await assert.rejects(api.createRayCluster(body), (err: DomainError) => {
      assert.equal(err.type, 'KubeInvalidObject');
      assert.equal(err.permanent, true);
      assert.match(err.message, /spec\.workerGroupSpecs\[0\]\.groupName/);
      return true;
    });
    assert.equal(api.requests - before, 1, 'no retry inside the client');
  });

  it('reaper on kuberay: deletes an orphan, keeps a running owner\'s cluster, reports a malformed one', async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const running = await env.client.workflow.start<typeof experiment>('experiment', { taskQueue: uniqueId('unserved'), workflowId: uniqueId('owner'), args: [testInput()] });
    await backend.createCluster({ name: 'owned-a0', spec, owner: owner(0, running.workflowId) });
    await backend.createCluster({ name: 'orphan-a0', spec, owner: owner(0, 'no-such-workflow') });
    const malformed = buildRayCluster({ name: 'malformed-a0', namespace: ns, spec, owner: owner() });
    malformed.metadata.annotations = {};
    malformed.metadata.labels = { ...ownerLabels(owner()) };
    await backend.api.createRayCluster(malformed);

    const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('reaper-k');
    const deps = { ...activityDeps(config, env.client), backends: { kuberay: backend } };
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: createActivities(deps) });
    await worker.runUntil(async () => {
      for (let pass = 0; pass < 2; pass++) {
        const report = await env.client.workflow.execute<typeof reaper>('reaper', { taskQueue, workflowId: uniqueId('reaper-pass'), args: [{ graceSeconds: 0 }] });
        const by = Object.fromEntries((report as ReaperReport).entries.map((e) => [e.cluster, e]));
        assert.equal(by['owned-a0']?.action, 'kept', JSON.stringify(report));
        assert.equal(by['malformed-a0']?.action, 'reported');
        if (pass === 0) assert.equal(by['orphan-a0']?.action, 'deleted');
        else assert.equal(by['orphan-a0'], undefined);
      }
    });
    const left = (await backend.api.listRayClusters(MANAGED_SELECTOR)).map((c) => c.metadata.name).sort();
    assert.deepEqual(left, ['malformed-a0', 'owned-a0']);
    await running.terminate('test done');
    backend.close();
  });
});
