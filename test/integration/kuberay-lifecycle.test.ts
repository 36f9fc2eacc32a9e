import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
} from '@kubernetes/client-node';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { createProveSharedStorage } from '../../src/activities/join/shared-storage.js';
import { KubeClients } from '../../src/backends/kuberay/kube-client/clients.js';
import { loadKubeConfig } from '../../src/backends/kuberay/kube-config.js';
import { buildAuthSecret } from '../../src/backends/kuberay/auth-secret.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { MANAGED_SELECTOR, ownerLabels } from '../../src/backends/kuberay/labels.js';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { KUBERAY_PERMISSIONS } from '../../src/backends/kuberay/permissions.js';
import { RayDashboardClient, TERMINAL_JOB_STATES } from '../../src/backends/ray/dashboard-client.js';
import { RayHttpError } from '../../src/backends/ray/http.js';
import { REPO_ROOT } from '../../src/config/config.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { loadConfig } from '../../src/config/config.js';
import type { ReaperReport } from '../../src/domain/cluster/reaper.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import type { reaper } from '../../src/workflows/reaper.js';
import { type KubeEnv, startKubeEnv } from '../helpers/kube-env.js';
import { NETNS_PREFIX } from '../helpers/kubelet-standin/pod-network.js';
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

/** Resolves once the API server's port refuses connections (a restart has stopped it). */
async function apiServerDown(): Promise<void> {
  const { hostname, port } = new URL(loadKubeConfig(kube.adminKubeconfig).getCurrentCluster()?.server ?? '');
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
      socket
        .once('connect', () => {
          socket.destroy();
          resolve(true);
        })
        .once('error', () => resolve(false));
    }).catch(() => false);
    if (!open) return;
    await sleep(50);
  }
}

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
    const rc = await backend.kube.rayClusters.get('pods-a0');
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
    const netns = `${NETNS_PREFIX}${(worker.metadata?.uid ?? '').replace(/-/g, '').slice(0, 10)}`;
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
    // The image's user (no securityContext in the spec): Ray runs as uid 1000, group 100, not root.
    const ids = await readFile(`/proc/${pid}/status`, 'utf8');
    assert.match(ids, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m, 'the raylet runs as uid 1000');
    assert.match(ids, /^Gid:\s+100\s+100\s+100\s+100$/m, 'the raylet runs as gid 100');

    // The storage proof on these Pods. The run's folder under a parent without the Pods' group
    // (root:root 0755, as a root worker makes it on an unprepared volume): the Pods' uid may not
    // write there, and the error names the uid, the gid and the fix. (One probe job per cluster:
    // the passing side is every kuberay experiment, on the volume prepared for group 100.)
    const proveActivity = createProveSharedStorage({
      backends: { kuberay: backend },
      reportProgress: async () => undefined,
      rayHead: (u, t) => new RayDashboardClient(u, t),
      workflowStatus: async () => undefined,
      pollIntervalMs: 200,
    });
    const prove = (input: Parameters<typeof proveActivity>[0]) =>
      new MockActivityEnvironment().run(proveActivity, input);
    const locked = join(kube.storageDir, 'root-only');
    await mkdir(locked);
    await chown(locked, 0, 0);
    await chmod(locked, 0o755);
    const plain = kuberaySpec(kube.storageDir, kube.pvc);
    await assert.rejects(prove({ spec: plain, handle, runDir: join(locked, 'run') }), (err: unknown) => {
      assert.ok(err instanceof DomainError, String(err));
      assert.equal(err.type, 'StorageNotWritable');
      assert.match(
        err.message,
        /running as uid 1000 gid 100, is denied access in .*root-only\/run\/storage-probe-pods-a0/,
      );
      assert.match(err.message, /Permission denied/);
      assert.match(err.message, /owner uid 0 gid 0, mode 2775/);
      assert.match(err.message, /set kuberay\.securityContext\.fsGroup/);
      return true;
    });

    // Ray token auth: the head refuses a job without the cluster's token; with it the job runs and
    // its driver (in the head Pod) joins Ray with the token the container reads from the Secret.
    const url = handle.dashboardUrl ?? '';
    const token = (await backend.dashboardToken(handle)) ?? '';
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(handle).includes(token), 'the handle (workflow history) has no token');
    assert.ok(!JSON.stringify(rc).includes(token), 'the RayCluster has no token, only the Secret name');
    await assert.rejects(
      new RayDashboardClient(url).submitJob('auth-none', 'true', {}),
      (err: unknown) => err instanceof RayHttpError && err.status === 401,
    );
    const head_ = new RayDashboardClient(url, token);
    const driver = `python -c "import ray; ray.init(); print('auth-ok', ray.cluster_resources()['GPU'])"`;
    assert.deepEqual(await head_.submitJob('auth-good', driver, {}), { created: true });
    let job = await head_.job('auth-good');
    for (let i = 0; i < 120 && job && !TERMINAL_JOB_STATES.has(job.status); i++) {
      await sleep(500);
      job = await head_.job('auth-good');
    }
    assert.equal(job?.status, 'SUCCEEDED', job?.message);
    assert.match(await head_.jobLogs('auth-good'), /auth-ok 2\.0/);
    const secret = await core.readNamespacedSecret({ name: 'pods-a0-ray-auth', namespace: ns });
    assert.deepEqual(
      secret.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid]),
      [['RayCluster', 'pods-a0', rc?.metadata.uid]],
      'the RayCluster owns its Secret (garbage collection where kube-controller-manager runs)',
    );

    await backend.deleteCluster(handle);
    assert.deepEqual(
      (await core.listNamespacedPod({ namespace: ns, labelSelector: 'ray.io/cluster=pods-a0' })).items,
      [],
      "the deleted RayCluster's Pods are gone (garbage collector stand-in)",
    );
    await assert.rejects(
      core.readNamespacedSecret({ name: 'pods-a0-ray-auth', namespace: ns }),
      /404|not found/i,
    );
    assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
    assert.deepEqual(kube.kubelet?.errors, []);
    backend.close();
  });

  it('auth: none (an image whose Ray predates token auth): no token Secret, no token in the Pods, the head takes a job without one', async () => {
    const backend = new KubeRayBackend({
      namespace: ns,
      kubeconfig: kube.adminKubeconfig,
      dashboard: 'head-status',
      python: 'python',
      pollMs: 250,
    });
    const core = kube.admin.makeApiClient(CoreV1Api);
    const spec = { ...kuberaySpec(kube.storageDir, kube.pvc), auth: 'none' as const };
    const handle = await backend.createCluster({ name: 'noauth-a0', spec, owner: owner(0, 'wf-noauth') });
    await assert.rejects(
      core.readNamespacedSecret({ name: 'noauth-a0-ray-auth', namespace: ns }),
      /404|not found/i,
    );
    assert.equal(await backend.dashboardToken(handle), undefined);
    const deadline = Date.now() + 240_000;
    for (;;) {
      const s = await backend.describeCluster(handle);
      if (s.workersAlive === 2) break;
      assert.ok(Date.now() < deadline, `workers did not join: ${s.message}`);
      await sleep(500);
    }
    const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'ray.io/cluster=noauth-a0' }))
      .items;
    for (const p of pods)
      assert.ok(!JSON.stringify(p.spec?.containers).includes('RAY_AUTH'), p.metadata?.name);
    const head = new RayDashboardClient(handle.dashboardUrl ?? '');
    assert.deepEqual(await head.submitJob('noauth', 'python -c "print(1)"', {}), { created: true });
    await backend.deleteCluster(handle);
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
    const listed = await backend.kube.rayClusters.list(MANAGED_SELECTOR);
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
      await backend.kube.rayClusters.get('idem-a0'),
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
        assert.ok(err instanceof DomainError, String(err));
        assert.equal(err.type, 'KubePermissionDenied');
        assert.equal(err.permanent, true);
        assert.match(
          err.message,
          // The node ledger is the first thing a create reads (the suspects it must avoid).
          /cannot get configmaps\/ragen-orchestrator-node-suspects in namespace ragen-lifecycle; grant verb "get"/,
        );
        assert.match(err.message, /system:serviceaccount:ragen-lifecycle:ragen-restricted/);
        return true;
      },
    );
  });

  it('least privilege: deploy/worker/kuberay-rbac.yaml bound to a ServiceAccount runs the whole lifecycle, and that identity may do nothing more (SelfSubjectRulesReview)', async () => {
    // The file as a user applies it, in this namespace.
    const text = (
      await readFile(join(REPO_ROOT, 'deploy', 'worker', 'kuberay-rbac.yaml'), 'utf8')
    ).replaceAll('namespace: training', `namespace: ${ns}`);
    const objects = loadAllYaml(text) as KubernetesObject[];
    const objectsApi = KubernetesObjectApi.makeApiClient(kube.admin);
    for (const o of objects) await objectsApi.create(o);
    const core = kube.admin.makeApiClient(CoreV1Api);
    const { status } = await core.createNamespacedServiceAccountToken({
      name: 'ragen-orchestrator',
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const cluster = kube.admin.getCurrentCluster()!;
    const sa = new KubeConfig();
    sa.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'ragen-orchestrator', token: status?.token }],
      contexts: [{ name: 'sa', cluster: cluster.name, user: 'ragen-orchestrator' }],
      currentContext: 'sa',
    });
    const saKubeconfig = join(tmpdir(), `ragen-sa-${process.pid}.kubeconfig`);
    await writeFile(saKubeconfig, sa.exportConfig(), { mode: 0o600 });

    // What the identity may do in the namespace, one `group/resource:verb` per permission.
    const granted = async (): Promise<Set<string>> => {
      const review = await sa.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({
        body: { spec: { namespace: ns } },
      });
      const out = new Set<string>();
      for (const r of review.status?.resourceRules ?? [])
        for (const g of r.apiGroups ?? [])
          for (const res of r.resources ?? [])
            for (const v of r.verbs)
              out.add(`${g}/${res}:${v}${r.resourceNames?.length ? `[${r.resourceNames.join(',')}]` : ''}`);
      return out;
    };
    const documented = new Set(
      KUBERAY_PERMISSIONS.flatMap((p) => p.verbs.map((v) => `${p.group}/${p.resource}:${v}`)),
    );
    // What Kubernetes grants every authenticated user (system:basic-user): reviews of oneself.
    const everyUser = [
      'authorization.k8s.io/selfsubjectaccessreviews:create',
      'authorization.k8s.io/selfsubjectrulesreviews:create',
      'authentication.k8s.io/selfsubjectreviews:create',
    ];
    const beyond = (set: Set<string>) => [...set].filter((p) => !documented.has(p) && !everyUser.includes(p));
    const have = await granted();
    assert.deepEqual(beyond(have), [], 'the identity may do no more than the documented set');
    assert.deepEqual(
      [...documented].filter((p) => !have.has(p)),
      [],
      'the file grants the documented set',
    );

    // The backend as that identity: preflight, create (Secret, RayCluster, owner), status, token, delete.
    const backend = new KubeRayBackend({
      namespace: ns,
      kubeconfig: saKubeconfig,
      dashboard: 'service',
      python: 'python',
      pollMs: 200,
    });
    const spec = kuberaySpec('/tmp/ragen-lifecycle', kube.pvc);
    const checks = await backend.preflight(spec);
    assert.deepEqual(
      checks.filter((c) => !c.ok),
      [],
      JSON.stringify(checks),
    );
    const handle = await backend.createCluster({ name: 'least-a0', spec, owner: owner(0, 'wf-least') });
    const described = await backend.describeCluster(handle);
    assert.notEqual(described.phase, 'failed', described.message);
    const other = new KubeRayBackend({
      namespace: ns,
      kubeconfig: saKubeconfig,
      dashboard: 'service',
      python: 'python',
    });
    assert.match(
      (await other.dashboardToken(handle)) ?? '',
      /^[0-9a-f]{64}$/,
      'the token, read from its Secret',
    );
    assert.equal(await other.dashboardToken(handle), await backend.dashboardToken(handle));
    assert.deepEqual(await backend.deleteCluster(handle), { alreadyGone: false });
    await assert.rejects(
      core.readNamespacedSecret({ name: 'least-a0-ray-auth', namespace: ns }),
      /404|not found/i,
    );
    backend.close();
    other.close();
    await rm(saKubeconfig, { force: true });

    // The check can fail: one more verb bound to the identity is reported.
    await objectsApi.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'pods-delete', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }],
    } as KubernetesObject);
    await objectsApi.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'ragen-orchestrator-pods-delete', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods-delete' },
      subjects: [{ kind: 'ServiceAccount', name: 'ragen-orchestrator', namespace: ns }],
    } as KubernetesObject);
    assert.deepEqual(beyond(await granted()), ['/pods:delete']);
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
    const kubeClients = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns);
    const body = buildRayCluster({
      name: 'invalid-a0',
      namespace: ns,
      spec: kuberaySpec('/tmp/ragen-lifecycle', kube.pvc),
      owner: owner(),
    });
    delete (body.spec['workerGroupSpecs'] as Record<string, unknown>[])[0]!['groupName'];
    const before = kubeClients.transport.requests;
    await assert.rejects(kubeClients.rayClusters.create(body), (err: DomainError) => {
      assert.equal(err.type, 'KubeInvalidObject');
      assert.equal(err.permanent, true);
      assert.match(err.message, /spec\.workerGroupSpecs\[0\]\.groupName/);
      return true;
    });
    assert.equal(kubeClients.transport.requests - before, 1, 'no retry inside the client');
  });

  it('the API server restarting: a request retries in place (the failure table: connection refused is transient) and gets its answer', async () => {
    const kubeClients = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns, undefined, {
      budgetMs: 60_000,
      initialDelayMs: 200,
      maxDelayMs: 1_000,
    });
    const restarted = kube.restartApiServer(3000);
    await apiServerDown();
    assert.equal(
      await kubeClients.rayClusters.get('no-such-cluster'),
      undefined,
      'the 404 after the restart',
    );
    await restarted;
    const { retries } = kubeClients.transport;
    assert.ok(retries >= 1, `${retries} in-place retries`);
    // The same request with the default (no in-place retry) fails at once, transient, for the activity's policy.
    const once = new KubeClients(loadKubeConfig(kube.adminKubeconfig), ns);
    const down = kube.restartApiServer(2000);
    await apiServerDown();
    await assert.rejects(once.rayClusters.get('no-such-cluster'), (err: DomainError) => {
      assert.equal(err.type, 'KubeApiUnavailable');
      assert.equal(err.permanent, false);
      return true;
    });
    await down;
  });

  it("reaper on kuberay: deletes an orphan, keeps a running owner's cluster, reports a malformed one; deletes a token Secret left without its RayCluster", async () => {
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
    await backend.kube.rayClusters.create(malformed);
    // Submit makes the token Secret before the RayCluster: a submit that died in between leaves one alone.
    await backend.kube.secrets.create(buildAuthSecret('lone-a0', ns, owner(0, 'no-such-workflow')));
    await backend.kube.secrets.create(buildAuthSecret('lone-kept-a0', ns, owner(0, running.workflowId)));

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
        assert.equal(by['lone-kept-a0']?.action, 'kept', 'a Secret whose submit may still run is kept');
        assert.equal(by['owned-a0-ray-auth'], undefined, 'a Secret with its RayCluster is not listed apart');
        if (pass === 0) assert.equal(by['orphan-a0']?.action, 'deleted');
        else assert.equal(by['orphan-a0'], undefined);
        if (pass === 0) assert.equal(by['lone-a0']?.action, 'deleted');
        else assert.equal(by['lone-a0'], undefined);
      }
    });
    const left = (await backend.kube.rayClusters.list(MANAGED_SELECTOR)).map((c) => c.metadata.name).sort();
    assert.deepEqual(left, ['malformed-a0', 'owned-a0']);
    assert.equal(
      await backend.kube.secrets.get('lone-a0-ray-auth'),
      undefined,
      'the lone orphan Secret is gone',
    );
    assert.ok(
      await backend.kube.secrets.get('lone-kept-a0-ray-auth'),
      "the running owner's Secret is still there",
    );
    await running.terminate('test done');
    backend.close();
  });
});
