import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { freePorts } from '../../src/backends/local/ports.js';
import { REPO_ROOT } from '../../src/config/config.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { rayProcesses } from '../helpers/processes.js';

const run = promisify(execFile);

/**
 * The README's main command, as scripts/run-example.sh runs it after setup: build the CLI when a
 * source changed (scripts/build-if-stale.sh), then `node bin/ragen-orchestrator.js run --embedded
 * examples/sokoban-local.yaml`: its own Temporal dev server, a worker in the process, a local Ray
 * cluster and the Sokoban payload. Only the address, task queue and run root are this test's own,
 * so that nothing it starts meets another server, worker or cluster.
 */
const EXAMPLE = 'examples/sokoban-local.yaml';
const runRoot = `/tmp/ro-rm-${process.pid}`;
const taskQueue = `readme-main-${process.pid}`;

/** Whether nothing listens on `port` on loopback. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port for the embedded server whose UI port (port + 1000, as the CLI picks it) is free too. */
async function serverPort(): Promise<number> {
  for (;;) {
    const [port] = (await freePorts(1)) as [number];
    if (port + 1000 <= 65_535 && (await portFree(port + 1000))) return port;
  }
}

interface CommandRun {
  code: number | null;
  stdout: string;
  /** The most Ray processes of this run seen at once while it ran. */
  peakRayProcesses: number;
}

async function readmeCommand(env: NodeJS.ProcessEnv): Promise<CommandRun> {
  const child = spawn(process.execPath, ['bin/ragen-orchestrator.js', 'run', '--embedded', EXAMPLE], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  let peakRayProcesses = 0;
  while (!done) {
    peakRayProcesses = Math.max(peakRayProcesses, (await rayProcesses(runRoot)).length);
    await sleep(2000);
  }
  return { code: await exited, stdout, peakRayProcesses };
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

let result: CommandRun;
let manifestPath = '';

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  // The same build step as run-example.sh; bin/ragen-orchestrator.js then picks dist/.
  await run('bash', ['scripts/build-if-stale.sh'], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
});

after(async () => {
  if (process.env['KEEP_RUN_ROOT']) return;
  await rm(runRoot, { recursive: true, force: true });
  // The run's own archive and checkpoints (the example's storage is shared by every run of it).
  if (manifestPath) {
    const manifest = ManifestSchema.parse(JSON.parse(await readFile(manifestPath, 'utf8')));
    await rm(manifest.checkpointDir, { recursive: true, force: true });
    await rm(dirname(manifestPath), { recursive: true, force: true });
  }
});

describe("the README's main command: the built CLI's run --embedded on the example spec", () => {
  it('runs the example end to end, writes a complete manifest and leaves no Ray process', async () => {
    const built = await stat(join(REPO_ROOT, 'dist', 'cli', 'main.js'));
    const { stdout: newer } = await run('find', ['src', '-newer', 'dist/cli/main.js', '-print', '-quit'], {
      cwd: REPO_ROOT,
    });
    assert.equal(
      newer,
      '',
      `the build is stale (dist/cli/main.js of ${built.mtime.toISOString()}): bin would not run it`,
    );

    result = await readmeCommand({
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${await serverPort()}`,
      RAGEN_TASK_QUEUE: taskQueue,
      RAGEN_RUN_ROOT: runRoot,
    });
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /^starting the Temporal dev server on 127\.0\.0\.1:\d+/m);
    assert.match(result.stdout, /^outcome: succeeded$/m);
    assert.match(result.stdout, /^teardown: succeeded$/m);
    manifestPath = /^manifest: (\/\S+)$/m.exec(result.stdout)?.[1] ?? '';
    assert.ok(manifestPath, `no manifest path printed:\n${result.stdout}`);

    const spec = parseYaml(await readFile(join(REPO_ROOT, EXAMPLE), 'utf8')) as {
      rayVersion: string;
      trainer: { totalTrainingSteps: number; saveFreq: number };
      validation: { episodes: number; seed: number };
    };
    const manifest = ManifestSchema.parse(JSON.parse(await readFile(manifestPath, 'utf8')));
    assert.equal(manifest.outcome, 'succeeded');
    assert.equal(manifest.temporal.taskQueue, taskQueue);

    // The image: the local backend runs the venv's Ray, no image; the manifest says so, unverified.
    assert.equal(manifest.image.ref, undefined);
    assert.equal(manifest.image.digest, undefined);
    assert.equal(manifest.image.verified, false);
    assert.ok(manifest.image.note.length > 0, 'the manifest says why no image was verified');
    // Ray: declared in the spec and observed on the head.
    assert.equal(manifest.rayVersion.declared, spec.rayVersion);
    assert.equal(manifest.rayVersion.observedOnHead, spec.rayVersion);

    // Checkpoints every saveFreq steps, each file's sha256 as on disk, the record's hash over them.
    const { totalTrainingSteps: total, saveFreq } = spec.trainer;
    assert.deepEqual(
      manifest.checkpoints.map((c) => c.step),
      Array.from({ length: total / saveFreq }, (_, i) => (i + 1) * saveFreq),
    );
    for (const c of manifest.checkpoints) {
      assert.ok(c.files.length > 0, `checkpoint ${c.step} lists no file`);
      for (const f of c.files)
        assert.equal(sha256(await readFile(join(c.path, f.path))), f.sha256, `${c.path}/${f.path}`);
      assert.equal(c.sha256, sha256(c.files.map((f) => `${f.path} ${f.sha256}\n`).join('')));
    }

    // Validation from the final checkpoint, on the spec's seeds.
    const validation = manifest.validation.result;
    assert.ok(validation, 'no validation result in the manifest');
    assert.equal(validation.step, total);
    assert.equal(validation.episodes, spec.validation.episodes);
    assert.deepEqual(validation.seeds, {
      first: spec.validation.seed,
      last: spec.validation.seed + spec.validation.episodes - 1,
    });
    assert.ok(validation.success_rate >= 0 && validation.success_rate <= 1);
    assert.equal(manifest.seeds.val, spec.validation.seed);
    assert.equal(typeof manifest.seeds.train, 'number');

    // Every stage, once, in order, with its start and end.
    assert.deepEqual(
      manifest.stages.map((s) => [s.stage, s.outcome]),
      [
        ...['preflight', 'verify', 'submit', 'join', 'train', 'validate', 'teardown'].map((s) => [
          s,
          'succeeded',
        ]),
        // The manifest is written inside the archive stage: it has begun, not ended.
        ['archive', undefined],
      ],
    );
    for (const s of manifest.stages.filter((s) => s.stage !== 'archive')) {
      assert.ok(s.endedAt, `stage ${s.stage} has no end`);
      assert.ok(Date.parse(s.endedAt) >= Date.parse(s.startedAt), `stage ${s.stage} ends before it starts`);
    }

    console.log(
      `# ${manifest.temporal.workflowId}: peak ${result.peakRayProcesses} Ray processes of its own; ` +
        `checkpoints ${manifest.checkpoints.map((c) => `${c.step}:${c.sha256.slice(0, 12)}`).join(' ')}; ` +
        `validation ${validation.success_rate}; image: ${manifest.image.note}`,
    );
    // The run had its own Ray processes, and none is left now that the command has ended.
    assert.ok(
      result.peakRayProcesses > 0,
      'no Ray process of this run was ever seen: the count below proves nothing',
    );
    assert.deepEqual(await rayProcesses(runRoot), [], 'the command left Ray processes of its own running');
    assert.deepEqual(await rayProcesses(), [], 'Ray processes are left on the machine');
  });
});
