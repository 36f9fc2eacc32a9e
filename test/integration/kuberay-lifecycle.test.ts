import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
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
import { rayProcesses } from '../helpers/processes.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * The kuberay backend's lifecycle against a real kube-apiserver and the real KubeRay operator
 * (etcd, kube-apiserver and kuberay-operator from their Go modules; the stand-in kubelet runs the
 * operator's Pods). These tests are about the custom resource and the API's answers; whole
 * experiments are in experiment-kuberay.test.ts. Run under `flock /tmp/ray-test.lock` (Ray runs in the Pods).
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
const ns = 'ragen-lifecycle';
const owner = (attempt = 0, workflowId = 'wf-lifecycle') => ({
  experiment: 'sokoban-test',
  workflowId,
  runId: '0193a3b4-1111-7222-8333-444455556666',
  attempt,
});
const backendFor = (kubeconfig: string) =>
  new KubeRayBackend({ namespace: ns, kubeconfig, dashboard: 'service', python: 'python', pollMs: 200 });
const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  kube = await startKubeEnv({ namespace: ns });
  console.log(`# kube env warm start: ${(kube.startMs / 1000).toFixed(1)} s`);
  env = await devServerEnv();
});
after(async () => {
  await env?.teardown();
  await kube?.stop();
});

describe('kuberay backend against a real kube-apiserver and the real KubeRay operator', () => {
  it("the operator's Pods under the stand-in kubelet: bound, own IPs, Ready by their probes, workers joined by the head Service's name, storage shared; delete removes Pods and processes", async () => {
    const backend = new KubeRayBackend({
      namespace: ns,
      kubeconfig: kube.adminKubeconfig,
      dashboard: 'head-status',
      python: 'python',
      pollMs: 250,
    });
    const core = kube.admin.makeApiClient(CoreV1Api);
    const handle = await backend.createCluster({
      name: 'pods-a0',
      spec: kuberaySpec(kube.storageDir, kube.pvc),
      owner: owner(),
    });
    const deadline = Date.now() + 240_000;
    for (;;) {
      const s = await backend.describeCluster(handle);
      if (s.workersAlive === 2 && s.gpusRegistered === 2) break;
      assert.ok(Date.now() < deadline, `workers did not join: ${s.message}`);
      await sleep(500);
    }
    const rc = await backend.api.getRayCluster('pods-a0');
    const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'ray.io/cluster=pods-a0' }))
      .items;
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.equal(p.spec?.nodeName, kube.nodeName, 'bound by the stand-in scheduler');
      assert.equal(
        p.metadata?.labels?.['app.kubernetes.io/managed-by'],
        'ragen-orchestrator',
        'our template labels reach the Pod',
      );
      assert.equal(p.status?.phase, 'Running');
    }
    assert.equal(new Set(pods.map((p) => p.status?.podIP)).size, 3, 'every Pod has an address of its own');
    const head = pods.find((p) => p.metadata?.labels?.['ray.io/node-type'] === 'head');
    assert.equal(
      rc?.status?.head?.podIP,
      head?.status?.podIP,
      "the operator read the head's address from the Pod status",
    );
    assert.equal(rc?.status?.conditions?.find((c) => c.type === 'HeadPodReady')?.status, 'True');
    assert.ok((rc?.status?.readyWorkerReplicas ?? 0) <= 2);
    for (const w of pods.filter((p) => p !== head)) {
      assert.equal(
        w.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode,
        0,
        'wait-gcs-ready reached the head GCS by the Service name',
      );
    }
    // The PVC: a file the test process writes is read inside a worker Pod (its mount namespace), and back.
    const worker = pods.find((p) => p !== head)!;
    const netns = `rk-${(worker.metadata?.uid ?? '').replace(/-/g, '').slice(0, 10)}`;
    const pids = (await exec('ip', ['netns', 'pids', netns])).stdout.trim().split('\n');
    const cmdlines = await Promise.all(
      pids.map((p) => readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')),
    );
    const pid = pids[cmdlines.findIndex((c) => c.includes('raylet'))] ?? '';
    assert.ok(pid, `a raylet runs in the worker Pod's network namespace ${netns}`);
    await writeFile(join(kube.storageDir, 'from-test'), 'written by the test process');
    const inPod = (script: string) =>
      exec('nsenter', ['-t', pid, '-n', '-m', '-u', '--', 'bash', '-c', script]);
    assert.equal((await inPod(`cat ${kube.storageDir}/from-test`)).stdout, 'written by the test process');
    await inPod(`echo -n "written in $(hostname)" > ${kube.storageDir}/from-pod`);
    assert.equal(
      await readFile(join(kube.storageDir, 'from-pod'), 'utf8'),
      `written in ${worker.metadata?.name}`,
    );
    assert.match(
      (await inPod('grep " /dev/shm " /proc/mounts')).stdout,
      /tmpfs/,
      "the operator's /dev/shm emptyDir is a tmpfs",
    );
    assert.equal(
      (await inPod('ls /tmp | grep -c from-test || true')).stdout.trim(),
      '0',
      'each container has its own /tmp',
    );

    await backend.deleteCluster(handle);
    assert.deepEqual(
      (await core.listNamespacedPod({ namespace: ns, labelSelector: 'ray.io/cluster=pods-a0' })).items,
      [],
      "the deleted RayCluster's Pods are gone (garbage collector stand-in)",
    );
    assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
    assert.deepEqual(kube.kubelet?.errors, []);
    backend.close();
  });

  it('a retried create leaves one cluster; a second attempt name clash is refused; delete is idempotent', async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const request = { name: 'idem-a0', spec, owner: owner() };
    const first = await backend.createCluster(request);
    const second = await backend.createCluster(request);
    assert.deepEqual(second, first);
    assert.equal(first.dashboardUrl, `http://idem-a0-head-svc.${ns}.svc:8265`);
    const listed = await backend.api.listRayClusters(MANAGED_SELECTOR);
    assert.deepEqual(
      listed.map((c) => c.metadata.name),
      ['idem-a0'],
    );
    await assert.rejects(
      backend.createCluster({ ...request, owner: owner(0, 'another-workflow') }),
      (err: DomainError) => {
        assert.equal(err.type, 'ClusterNameTaken');
        assert.equal(err.permanent, true);
        return true;
      },
    );
    assert.deepEqual(await backend.deleteCluster(first), { alreadyGone: false });
    assert.equal(
      await backend.api.getRayCluster('idem-a0'),
      undefined,
      'delete polls until the object is gone',
    );
    assert.deepEqual(await backend.deleteCluster(first), { alreadyGone: true });
    backend.close();
  });

  it('a restricted identity gets a non-retryable error naming the missing permission, at preflight and at create', async () => {
    const restricted = backendFor(kube.restrictedKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const checks = await restricted.preflight(spec);
    const perms = checks.find((c) => c.name === 'kuberay-permissions');
    assert.equal(perms?.ok, false);
    assert.match(
      perms?.detail ?? '',
      /cannot create, delete rayclusters\.ray\.io in namespace ragen-lifecycle/,
    );
    assert.equal(checks.find((c) => c.name === 'kuberay-crd')?.ok, true, JSON.stringify(checks));
    assert.match(
      checks.find((c) => c.name === 'kuberay-storage-pvc')?.detail ?? '',
      /cannot get persistentvolumeclaims\/ragen-storage/,
    );
    await assert.rejects(
      restricted.createCluster({ name: 'denied-a0', spec, owner: owner() }),
      (err: DomainError) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.type, 'KubePermissionDenied');
        assert.equal(err.permanent, true);
        assert.match(
          err.message,
          /cannot create rayclusters\.ray\.io\/denied-a0 in namespace ragen-lifecycle; grant verb "create"/,
        );
        assert.match(err.message, /system:serviceaccount:ragen-lifecycle:ragen-restricted/);
        return true;
      },
    );
  });

  it('preflight passes for the admin: CRD, permissions, GPU capacity from the nodes, the PVC; refuses a missing PVC and too few GPUs', async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const ok = await backend.preflight(kuberaySpec('/tmp/ragen-lifecycle', kube.pvc));
    assert.deepEqual(
      ok.filter((c) => !c.ok),
      [],
      JSON.stringify(ok),
    );
    const bad = await backend.preflight(kuberaySpec('/tmp/ragen-lifecycle', 'no-such-pvc'));
    assert.match(
      bad.find((c) => c.name === 'kuberay-storage-pvc')?.detail ?? '',
      /PersistentVolumeClaim no-such-pvc does not exist in namespace ragen-lifecycle/,
    );
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
    const body = buildRayCluster({
      name: 'invalid-a0',
      namespace: ns,
      spec: kuberaySpec('/tmp/ragen-lifecycle', kube.pvc),
      owner: owner(),
    });
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

  it("reaper on kuberay: deletes an orphan, keeps a running owner's cluster, reports a malformed one", async () => {
    const backend = backendFor(kube.adminKubeconfig);
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const running = await env.client.workflow.start<typeof experiment>('experiment', {
      taskQueue: uniqueId('unserved'),
      workflowId: uniqueId('owner'),
      args: [testInput()],
    });
    await backend.createCluster({ name: 'owned-a0', spec, owner: owner(0, running.workflowId) });
    await backend.createCluster({ name: 'orphan-a0', spec, owner: owner(0, 'no-such-workflow') });
    const malformed = buildRayCluster({ name: 'malformed-a0', namespace: ns, spec, owner: owner() });
    malformed.metadata.annotations = {};
    malformed.metadata.labels = { ...ownerLabels(owner()) };
    await backend.api.createRayCluster(malformed);

    const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('reaper-k');
    const deps = { ...activityDeps(config, env.client), backends: { kuberay: backend } };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(deps),
    });
    await worker.runUntil(async () => {
      for (let pass = 0; pass < 2; pass++) {
        const report = await env.client.workflow.execute<typeof reaper>('reaper', {
          taskQueue,
          workflowId: uniqueId('reaper-pass'),
          args: [{ graceSeconds: 0 }],
        });
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
