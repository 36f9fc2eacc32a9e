import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, copyFile, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAllReduceCheck } from '../../src/activities/join/allreduce.js';
import { createActivities } from '../../src/activities/index.js';
import type { ActivityDeps } from '../../src/activities/common/deps.js';
import { LocalBackend } from '../../src/backends/local/local-backend.js';
import { authTokenPath } from '../../src/backends/local/auth-token.js';
import {
  RayDashboardClient,
  RayJobConflict,
  TERMINAL_JOB_STATES,
} from '../../src/backends/ray/dashboard-client.js';
import { RayHttpError } from '../../src/backends/ray/http.js';
import { buildPyModulesPackage } from '../../src/backends/ray/py-modules.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import type { AllReduceResult } from '../../src/domain/run/results.js';
import { barePython, canImport } from '../helpers/bare-python.js';
import { rayProcesses } from '../helpers/processes.js';
import { testSpec } from '../helpers/specs.js';

/**
 * The all-reduce probe travels with its Ray job (runtime_env py_modules through the dashboard's
 * package endpoint) to a real local Ray cluster whose Python has Ray and numpy but neither the
 * payload nor the probe package installed.
 */
const runRoot = `/tmp/ro-pm-${process.pid}`;
let dir: string;
let backend: LocalBackend;
let handle: ClusterHandle | undefined;
let bare: { python: string; rayBin: string };

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  dir = await mkdtemp(join(tmpdir(), 'probe-pm-'));
  bare = await barePython(join(dir, 'bare-venv'));
  backend = new LocalBackend({
    runRoot,
    rayBin: bare.rayBin,
    python: bare.python,
    nodeIp: loadConfig().RAGEN_NODE_IP,
  });
});
after(async () => {
  if (handle) await backend.deleteCluster(handle);
  await rm(runRoot, { recursive: true, force: true });
  if (dir) await rm(dir, { recursive: true, force: true });
});

function deps(probesDir?: string): ActivityDeps {
  return {
    backends: { local: backend },
    rayHead: (url, token) => new RayDashboardClient(url, token),
    reportProgress: async () => undefined,
    workflowStatus: async () => undefined,
    probesDir,
    pollIntervalMs: 500,
  };
}

describe('all-reduce probe shipped as runtime_env py_modules (real local Ray, a Python without the project)', () => {
  it("the cluster's Python cannot import the payload or the probe on its own, only ray and numpy", async () => {
    assert.equal(await canImport(bare.python, 'ray, numpy'), true);
    assert.equal(await canImport(bare.python, 'ragen_toy'), false);
    assert.equal(await canImport(bare.python, 'ragen_probes'), false);
  });

  it("the environment probe, shipped the same way, finds that this Python misses the payload's contract", async () => {
    const spec = testSpec({}, dir);
    const owner = { experiment: spec.name, workflowId: 'probe-test', runId: 'r', attempt: 0 };
    handle = await backend.createCluster({ name: 'probe-pm-a0', spec, owner });
    await assert.rejects(
      new MockActivityEnvironment().run(createActivities(deps()).allReduceCheck, {
        spec,
        handle,
        runDir: join(dir, 'run'),
      }),
      (err: unknown) => {
        assert.ok(err instanceof ApplicationFailure, String(err));
        assert.equal(err.type, ErrorTypes.ImageContractUnmet);
        assert.equal(err.nonRetryable, true);
        assert.match(err.message, /- module:ragen_toy on head .*worker .*worker /);
        assert.match(err.message, /- entrypoint on job driver \(head\): module ragen_toy\.train not found/);
        assert.doesNotMatch(err.message, /module:(ray|numpy)\b/);
        return true;
      },
    );
  });

  it('runs the all-reduce on both GPU workers: the package is uploaded once, then found by its hash', async () => {
    assert.ok(handle, 'the cluster of the previous test');
    // What this Python has: Ray and numpy; the "trainer" is the shipped probe itself.
    const base = testSpec({}, dir);
    const spec = {
      ...base,
      // Logical GPUs and no torch: no GPU count (the probe's default for a non-payload trainer).
      imageContract: { requires: ['ray', 'numpy'], gpuCheck: false },
      trainer: { ...base.trainer, entrypoint: ['python', '-m', 'ragen_probes.allreduce'] },
    };
    const head = new RayDashboardClient(handle.dashboardUrl ?? '', await backend.dashboardToken(handle));
    const pkg = await buildPyModulesPackage(join(REPO_ROOT, 'probes'), 'ragen_probes');
    assert.equal(await head.packageExists(pkg.name), true, 'uploaded by the probe of the previous test');
    // A renamed handle (its own submission ids) of the same cluster: it gets the cluster's token file.
    const metDir = join(runRoot, `${handle.name}-met`);
    await mkdir(metDir, { recursive: true });
    await copyFile(authTokenPath(join(runRoot, handle.name)), authTokenPath(metDir));
    await chmod(authTokenPath(metDir), 0o600);

    const result: AllReduceResult = await new MockActivityEnvironment().run(createAllReduceCheck(deps()), {
      spec,
      handle: { ...handle, name: `${handle.name}-met` },
      runDir: join(dir, 'run'),
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(result.path, 'ray-ring-numpy');
    assert.equal(result.world_size, 2);
    assert.equal(result['probePackage'], pkg.uri);
    assert.match(pkg.uri, /^gcs:\/\/_ray_pkg_[0-9a-f]{40}\.zip$/);
    assert.equal(await head.packageExists(pkg.name), true, 'the package is in the GCS after the check');
    const written = JSON.parse(
      await readFile(join(dir, 'run', `allreduce-${handle.name}-met.json`), 'utf8'),
    ) as {
      ok: boolean;
    };
    assert.equal(written.ok, true);
  });

  it('a probe that cannot be imported on the image fails once as ProbeUnavailable, naming the module and the image', async () => {
    assert.ok(handle, 'the cluster of the previous test');
    // A copy of the probe whose package imports a module the image lacks (as a probe needing a
    // library the image does not have would).
    const broken = join(dir, 'broken-probes');
    await cp(join(REPO_ROOT, 'probes', 'ragen_probes'), join(broken, 'ragen_probes'), { recursive: true });
    await writeFile(
      join(broken, 'ragen_probes', '__init__.py'),
      'import ragen_module_the_image_lacks  # noqa: F401\n',
      { flag: 'a' },
    );
    const image = `127.0.0.1:5000/ragen/sokoban@sha256:${'a'.repeat(64)}`;
    // The renamed handle (for its own submission id) is the same cluster: it gets the cluster's token file.
    const brokenDir = join(runRoot, `${handle.name}-broken`);
    await mkdir(brokenDir, { recursive: true });
    await copyFile(authTokenPath(join(runRoot, handle.name)), authTokenPath(brokenDir));
    await chmod(authTokenPath(brokenDir), 0o600);
    const spec = testSpec({ image }, dir);
    const env = new MockActivityEnvironment();
    await assert.rejects(
      env.run(createActivities(deps(broken)).allReduceCheck, {
        spec,
        handle: { ...handle, name: `${handle.name}-broken` },
        runDir: join(dir, 'run'),
      }),
      (err: unknown) => {
        assert.ok(err instanceof ApplicationFailure, String(err));
        assert.equal(err.type, ErrorTypes.ProbeUnavailable);
        assert.equal(err.nonRetryable, true);
        // The environment probe is the first job shipped: the package fails to load there already.
        assert.match(err.message, /ragen_probes\.environment/);
        assert.match(err.message, /ragen_module_the_image_lacks/);
        assert.ok(err.message.includes(image), err.message);
        return true;
      },
    );
  });

  it('Ray token auth: a job without the token is refused (401), a wrong one too (403), the cluster token is accepted and its driver joins Ray; the token is in a 0600 file only, not in the handle or any log', async () => {
    assert.ok(handle, 'the cluster of the previous tests');
    const url = handle.dashboardUrl ?? '';
    const token = (await backend.dashboardToken(handle)) ?? '';
    assert.match(token, /^[0-9a-f]{64}$/);
    const file = authTokenPath(join(runRoot, handle.name));
    assert.equal((await stat(file)).mode & 0o777, 0o600, 'only its owner may read the token file');
    assert.ok(!JSON.stringify(handle).includes(token), 'the handle (workflow history) has no token');
    const driver = `${bare.python} -c "import ray; ray.init(); print('auth-ok', ray.cluster_resources()['CPU'])"`;
    const refused = (status: number) => (err: unknown) =>
      err instanceof RayHttpError && err.status === status && !err.message.includes(token);
    await assert.rejects(new RayDashboardClient(url).submitJob('auth-none', driver, {}), refused(401));
    await assert.rejects(
      new RayDashboardClient(url, 'f'.repeat(64)).submitJob('auth-bad', driver, {}),
      refused(403),
    );
    const head = new RayDashboardClient(url, token);
    assert.deepEqual(await head.submitJob('auth-good', driver, {}), { created: true });
    let job = await head.job('auth-good');
    for (let i = 0; i < 120 && job && !TERMINAL_JOB_STATES.has(job.status); i++) {
      await sleep(500);
      job = await head.job('auth-good');
    }
    assert.equal(job?.status, 'SUCCEEDED', job?.message);
    // Submission is idempotent by id: the same job again is found, another entrypoint under it refused.
    assert.deepEqual(await head.submitJob('auth-good', driver, {}), { created: false });
    await assert.rejects(
      head.submitJob('auth-good', `${driver} --other`, {}),
      (err) => err instanceof RayJobConflict && err.permanent && /another entrypoint/.test(err.message),
    );
    assert.match(
      await head.jobLogs('auth-good'),
      /auth-ok/,
      'the driver connected with the inherited token path',
    );
    const { stdout } = await promisify(execFile)('grep', [
      '-rlF',
      '--exclude=ray-auth-token',
      token,
      runRoot,
    ]).catch((err: { code?: number; stdout?: string }) => {
      if (err.code === 1) return { stdout: '' }; // grep: no match
      throw err;
    });
    assert.equal(stdout, '', 'no log or state file holds the token');
  });

  it('leaves no Ray process after the cluster is deleted', async () => {
    if (handle) await backend.deleteCluster(handle);
    if (handle)
      await assert.rejects(stat(authTokenPath(join(runRoot, handle.name))), 'the token file is deleted too');
    handle = undefined;
    assert.deepEqual(await rayProcesses(), []);
  });
});
