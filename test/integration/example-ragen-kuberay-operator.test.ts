import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import type { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import { RAY_VERSION_LABEL } from '../../src/registry/ray-version.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import type { EnvironmentRecord } from '../../src/domain/join/environment-probe.js';
import { loadExperimentSpec } from '../../src/cli/spec-files/load.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { type KubeEnv, adminBackend, startKubeEnv } from '../helpers/kube-env.js';
import { pushImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { writeModelDir } from '../helpers/model-dir.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * examples/ragen-sokoban-kuberay.yaml (the Polyaxon component of the RAGEN guide) run end to end
 * through the real KubeRay operator v1.5.0 and the STAND-IN kubelet. What this machine cannot
 * have is substituted, and only that: the image is a loopback registry's (verify reads it), the
 * RAGEN checkout at workingDir is a directory whose train.py runs the toy payload (RAGEN's
 * command-line contract), the PVC's host directory replaces /mnt/ragen, and the CPUs, memory and
 * steps are scaled to the stand-in node. Entry point, config name, cluster shape, /dev/shm and
 * the working directory layout are the example's.
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
let backend: KubeRayBackend;
let registry: RunningRegistry;
let checkout: string;
let image = '';

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  kube = await startKubeEnv({ namespace: 'ragen-example' });
  env = await devServerEnv();
  registry = await startRegistry();
  const pushed = await pushImage(
    { baseUrl: registry.baseUrl, repository: 'ragen/ragen' },
    { labels: { [RAY_VERSION_LABEL]: '2.60.0' } },
    '2.60.0',
  );
  image = `${registry.host}/ragen/ragen@${pushed}`;
  // The image's RAGEN checkout: `python train.py` resolves here and runs the toy trainer.
  // Not under /tmp: the stand-in kubelet gives each container a private /tmp, as an image would.
  await mkdir(join(REPO_ROOT, '.run'), { recursive: true });
  const files = await mkdtemp(join(REPO_ROOT, '.run', 'ragen-checkout-'));
  // Readable by the image's user, as an image's files are (mkdtemp makes it 0700, root only).
  await chmod(files, 0o755);
  checkout = join(files, 'RAGEN');
  await mkdir(checkout, { recursive: true });
  await writeFile(
    join(checkout, 'train.py'),
    "import runpy\nrunpy.run_module('ragen_toy.train', run_name='__main__', alter_sys=True)\n",
  );
  backend = adminBackend(kube);
});
after(async () => {
  backend?.close();
  await env?.teardown();
  await registry?.stop();
  await kube?.stop();
  if (checkout) await rm(join(checkout, '..'), { recursive: true, force: true });
});

/** The example with the substitutions above and nothing else changed. */
async function exampleForThisMachine(): Promise<ExperimentSpec> {
  const ex = await loadExperimentSpec('examples/ragen-sokoban-kuberay.yaml');
  const root = kube.storageDir;
  const k = ex.kuberay!;
  return {
    ...ex,
    image,
    // The stand-in image is this machine's venv: the toy payload behind train.py, no torch, logical GPUs.
    imageContract: { requires: ['ragen_toy', 'numpy', 'ray'], gpuCheck: false },
    cluster: {
      head: { cpus: 1 },
      workerGroups: ex.cluster.workerGroups.map((g) => ({ ...g, cpusPerWorker: 1 })),
    },
    trainer: { ...ex.trainer, totalTrainingSteps: 4, saveFreq: 2, testFreq: 0 },
    validation: { ...ex.validation, episodes: 16 },
    storage: { checkpointDir: `${root}/checkpoints`, archiveDir: `${root}/archive` },
    model: { path: `${root}/models/Qwen2.5-0.5B-Instruct` },
    deadlines: { ...ex.deadlines, joinSeconds: 600, noProgressSeconds: 300 },
    kuberay: {
      ...k,
      storage: { pvc: kube.pvc, mountPath: root },
      head: { ...k.head, workingDir: checkout, memory: '4Gi', shmSize: '1Gi' },
      workers: { ...k.workers, workingDir: checkout, memory: '4Gi', shmSize: '1Gi' },
    },
  };
}

describe('examples/ragen-sokoban-kuberay.yaml through the real KubeRay operator (stand-in kubelet, real Ray)', () => {
  it('runs python train.py --config-name _2_sokoban from the working directory to the last step', async () => {
    const spec = await exampleForThisMachine();
    assert.deepEqual(spec.trainer.entrypoint, ['python', 'train.py']);
    await writeModelDir(spec.model?.path ?? '');
    const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('example');
    const deps = { ...activityDeps(config, env.client), backends: { kuberay: backend } };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(deps),
    });
    const seen: V1Pod[] = [];
    const core = kube.admin.makeApiClient(CoreV1Api);
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('example-wf'),
        args: [testInput(spec)],
      });
      let done = false;
      const watcher = (async () => {
        while (!done && seen.length === 0) {
          const pods = (await core.listNamespacedPod({ namespace: kube.namespace })).items;
          if (pods.length === 3) seen.push(...pods);
          await sleep(500);
        }
      })();
      const r = await handle.result();
      done = true;
      await watcher;
      return r;
    });
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.training.finalStep, 4);
    const manifest = JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')) as {
      entrypoint?: string[];
      resolvedSpec: ExperimentSpec;
      environment?: { probe?: EnvironmentRecord };
    };
    assert.equal(manifest.resolvedSpec.trainer.configName, '_2_sokoban');
    // The environment probe ran in the Pods: the entrypoint found in the working directory, the model read on every node.
    const probe = manifest.environment?.probe;
    assert.ok(probe?.ok, JSON.stringify(probe?.failures));
    assert.equal(probe.nodes.length, 3);
    assert.deepEqual(probe.entrypoint, { cwd: checkout, file: 'train.py', found: true });
    assert.match(probe.model?.revision ?? '', /^sha256:[0-9a-f]{64}$/);
    console.log(
      `environment probe on kuberay (stand-in kubelet): wall_s ${probe.wall_s}, job ${probe.jobSeconds} s`,
    );
    // The Pods the operator made: workingDir and a sized /dev/shm on all three, the storage mounted.
    assert.equal(seen.length, 3);
    for (const p of seen) {
      const c = p.spec!.containers[0]!;
      assert.equal(c.workingDir, checkout);
      assert.ok(c.volumeMounts?.some((m) => m.mountPath === '/dev/shm'));
      assert.ok(c.volumeMounts?.some((m) => m.mountPath === kube.storageDir));
    }
    for (let i = 0; i < 100 && (await rayProcesses()).length > 0; i++) await sleep(200);
    assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  });
});
