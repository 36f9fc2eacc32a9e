import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { loadConfig } from '../../src/config/config.js';
import { activityDeps } from '../../src/worker/worker.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { expectedFingerprint, writeModelDir } from '../helpers/model-dir.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput, testSpec, validSpecYaml } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';
import { pushImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { RAY_VERSION_LABEL } from '../../src/registry/ray-version.js';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ExperimentResult } from '../../src/domain/run/experiment-input.js';
import { assertShippedCopyRan, changedPayloadCopy } from '../helpers/shipped-payload.js';

const run = promisify(execFile);

let env: TestWorkflowEnvironment;
let storage: string;
/** A real Distribution registry on loopback holding the images the specs name (verify reads them). */
let registry: RunningRegistry;
const images: Record<'matching' | 'older', string> = { matching: '', older: '' };
const runRoot = `/tmp/ro-it-${process.pid}`;

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-it-'));
  registry = await startRegistry();
  const target = { baseUrl: registry.baseUrl, repository: 'ragen/sokoban' };
  images.matching = `${registry.host}/ragen/sokoban:2.60.0@${await pushImage(target, { labels: { [RAY_VERSION_LABEL]: '2.60.0' } }, '2.60.0')}`;
  images.older = `${registry.host}/ragen/sokoban:2.9.3@${await pushImage(target, { labels: { [RAY_VERSION_LABEL]: '2.9.3' } }, '2.9.3')}`;
});
after(async () => {
  await env?.teardown();
  await registry?.stop();
  if (!process.env['KEEP_RUN_ROOT']) await rm(runRoot, { recursive: true, force: true });
});

describe('experiment on the real dev server, real Ray, real payload (local backend)', () => {
  it('runs all stages with a changed local copy of the payload shipped as working_dir, archives a manifest with validation success, and leaves no Ray process', async () => {
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('it');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(activityDeps(config, env.client)),
    });
    // A model directory on the (shared) storage: the probe reads it on every node, model_path points at it.
    const { dir: modelDir, files: modelFiles } = await writeModelDir(join(storage, 'models', 'qwen-tiny'));
    // The payload ships from a changed copy (spec `code`): training and validation must run it.
    const copy = await changedPayloadCopy(storage);
    const code = { path: copy.root, exclude: ['tests/'], maxSizeMb: 100 };
    const spec = testSpec({ image: images.matching, model: { path: modelDir }, code }, storage);
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('it-wf'),
        args: [testInput(spec)],
      }),
    );
    assert.equal(result.outcome, 'succeeded', JSON.stringify(result, null, 2));
    assert.equal(result.training.finalStep, 20);
    assert.equal(result.teardown.outcome, 'succeeded');
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')),
    );
    assert.equal(manifest.rayVersion.observedOnHead, '2.60.0');
    assert.equal(manifest.image.ref, images.matching);
    assert.equal(manifest.image.verified, true, manifest.image.note);
    assert.equal(manifest.image.rayVersion, '2.60.0');
    assert.equal(manifest.image.rayVersionSource, 'label');
    assert.equal(manifest.image.platformManifestDigest, manifest.image.digest);
    assert.deepEqual(
      manifest.checkpoints.map((c) => c.step),
      [10, 20],
    );
    assert.equal(manifest.cluster.nodes.filter((n) => n.alive && !n.isHead).length, 2);
    assert.ok(manifest.preflight.allReduce?.ok, 'the all-reduce check ran on the joined workers');
    // The per-node link test ran too: two worker nodes are one link, which names no node.
    const links = manifest.preflight.allReduce?.['links'] as
      { pairs: unknown[]; suspects: unknown[]; inconclusive?: string } | undefined;
    assert.equal(links?.pairs.length, 1, JSON.stringify(links));
    assert.deepEqual(links.suspects, []);
    assert.match(links.inconclusive ?? '', /two nodes share one link/);
    assert.ok(
      (manifest.validation.result?.success_rate ?? 0) > 0.5,
      `validation success ${manifest.validation.result?.success_rate}`,
    );
    assert.equal(manifest.validation.result?.runner, 'payload');
    assert.equal(manifest.validation.result?.env_tag, 'CoordSokoban');
    assert.deepEqual(manifest.validation.result?.seeds, { first: 5000, last: 5031 });
    assert.match(
      String(manifest.preflight.allReduce?.['probePackage']),
      /^gcs:\/\/_ray_pkg_[0-9a-f]{40}\.zip$/,
      'the all-reduce probe travelled as a py_modules package',
    );
    assert.deepEqual(
      manifest.stages.map((s) => s.stage),
      ['preflight', 'verify', 'submit', 'join', 'train', 'validate', 'teardown', 'archive'],
      `a stage failed and the run went on: ${JSON.stringify(manifest.stages.filter((s) => s.error))}`,
    );
    // The environment probe ran on all three nodes before the all-reduce, with the payload's contract.
    const probe = manifest.environment.probe;
    assert.ok(probe?.ok, JSON.stringify(probe?.failures));
    assert.equal(probe.nodes.length, 3);
    assert.deepEqual(Object.keys(probe.nodes[0]?.['modules'] as object).sort(), [
      'numpy',
      'ragen_toy',
      'ray',
    ]);
    assert.deepEqual(probe.model, {
      path: modelDir,
      source: 'path',
      revision: expectedFingerprint(modelFiles),
    });
    assert.ok(manifest.entrypoint.includes(`model_path=${modelDir}`));
    assert.equal(manifest.preflight.allReduce?.['environment'], undefined, 'the probe is recorded once');
    console.log(
      `environment probe (passing): wall_s ${probe.wall_s} in the driver, job ${probe.jobSeconds} s`,
    );
    await assertShippedCopyRan(manifest, copy, ['trainer.total_training_steps=20', '--episodes']);
    assert.deepEqual(await rayProcesses(), [], 'teardown left Ray processes');
  });

  it("fails verify on the image label's Ray version before any cluster is created", async () => {
    const mismatchRoot = `/tmp/ro-vm-${process.pid}`;
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: mismatchRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const taskQueue = uniqueId('it-verify');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(activityDeps(config, env.client)),
    });
    const spec = testSpec({ image: images.older }, storage);
    const err = await worker
      .runUntil(
        env.client.workflow.execute<typeof experiment>('experiment', {
          taskQueue,
          workflowId: uniqueId('it-verify-wf'),
          args: [testInput(spec)],
        }),
      )
      .then(
        () => assert.fail('the experiment ran with a mismatched image'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof WorkflowFailedError);
    const cause = err.cause;
    assert.ok(cause instanceof ApplicationFailure);
    assert.equal(cause.type, 'RayVersionMismatch');
    assert.match(
      cause.message,
      /contains Ray 2\.9\.3 \(label io\.ray\.version\), the spec declares rayVersion 2\.60\.0/,
    );
    const result = cause.details?.[0] as ExperimentResult;
    assert.deepEqual(
      result.stages.map((s) => [s.stage, s.outcome]),
      [
        ['preflight', 'succeeded'],
        ['verify', 'failed'],
      ],
    );
    assert.equal(result.submits, 0);
    assert.deepEqual(await readdir(mismatchRoot).catch(() => []), [], 'no cluster directory was created');
    assert.deepEqual(await rayProcesses(), []);
    await rm(mismatchRoot, { recursive: true, force: true });
  });

  it('refuses bad specs in the CLI before any server, worker or cluster starts', async () => {
    const cases: [string, RegExp][] = [
      [
        validSpecYaml(storage).replace('nnodes: 2', 'nnodes: 4'),
        /trainer\.nnodes: .*4 x 1 = 4, but the worker groups provide 2 GPUs/,
      ],
      [
        validSpecYaml(storage).replace('checkpointDir: ', 'checkpointDir: relative'),
        /storage\.checkpointDir: must be an absolute path/,
      ],
      [
        `${validSpecYaml(storage)}image: ray:latest\n`,
        /image: image 'ray:latest' is not pinned by an immutable digest/,
      ],
      [
        `${validSpecYaml(storage)}image: 127.0.0.1:5000/ragen@sha256:abc\n`,
        /image: .*the digest must be sha256: followed by 64 lowercase hex characters/,
      ],
      [`${validSpecYaml(storage)}gpus: 2\n`, /gpus: unknown field/],
      [
        `${validSpecYaml(storage)}code:\n  path: /nonexistent/RAGEN\n`,
        /code\.path: \/nonexistent\/RAGEN does not exist on the worker's machine; point code\.path at a checkout/,
      ],
      ['name: [', /malformed YAML/],
    ];
    const emptyRoot = `/tmp/ro-bad-${process.pid}`;
    for (const [yaml, expected] of cases) {
      const file = join(storage, `bad-${Math.random().toString(36).slice(2)}.yaml`);
      await import('node:fs/promises').then((fs) => fs.writeFile(file, yaml));
      const failed = await run('npx', ['tsx', 'src/cli/main.ts', 'run', '--embedded', file], {
        env: { ...process.env, RAGEN_RUN_ROOT: emptyRoot, TEMPORAL_ADDRESS: '127.0.0.1:1' },
      }).then(
        () => assert.fail('the bad spec was accepted'),
        (err: { code: number; stderr: string }) => err,
      );
      assert.equal(failed.code, 2, failed.stderr);
      assert.match(failed.stderr, expected);
    }
    await assert.rejects(readdir(emptyRoot), /ENOENT/, 'nothing was created');
    assert.deepEqual(await rayProcesses(), []);
  });
});
