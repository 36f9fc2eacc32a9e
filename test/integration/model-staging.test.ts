import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { stageHubModel } from '../../src/activities/model/stage-model.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import { modelDirectory, modelJobEnv } from '../../src/domain/model/model.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { type HubStandin, startHubStandin } from '../helpers/hub-standin.js';
import { expectedFingerprint, writeModelDir } from '../helpers/model-dir.js';
import { testSpec } from '../helpers/specs.js';

const run = promisify(execFile);
const REVISION = '0123456789abcdef0123456789abcdef01234567';
const python = loadConfig().python;
const probesDir = join(REPO_ROOT, 'probes');

/**
 * model: {hub, revision, hfHome} staged by the worker's real huggingface_hub (snapshot_download,
 * HF_ENDPOINT pointing at a STAND-IN hub: a local directory served over HTTP), then read offline
 * (HF_HUB_OFFLINE=1, the hub stopped) as every node does at train time.
 */
let root: string;
let hub: HubStandin;
let files: Record<string, Buffer>;
const endpointBefore = process.env['HF_ENDPOINT'];

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'ragen-stage-'));
  ({ files } = await writeModelDir(join(root, 'hub-repos', 'Qwen', 'Qwen2.5-tiny', REVISION)));
  hub = await startHubStandin(join(root, 'hub-repos'));
  process.env['HF_ENDPOINT'] = hub.endpoint; // the staging process inherits the worker's environment
});
after(async () => {
  await hub?.stop();
  if (endpointBefore === undefined) delete process.env['HF_ENDPOINT'];
  else process.env['HF_ENDPOINT'] = endpointBefore;
  await rm(root, { recursive: true, force: true });
});

const specFor = (hubRepo: string, revision = REVISION) =>
  testSpec({ model: { hub: hubRepo, revision, hfHome: join(root, 'hf-home') } }, root);

describe('model staging from a hub into HF_HOME on shared storage', () => {
  it('stages the pinned revision once; nodes then read it offline at the path model_path names', async () => {
    const spec = specFor('Qwen/Qwen2.5-tiny');
    const check = await stageHubModel(spec, python, probesDir);
    assert.equal(check?.ok, true, check?.detail);
    assert.match(check?.detail ?? '', /^staged 6 files at /);
    const dir = modelDirectory(spec.model!);
    assert.equal(dir, join(root, 'hf-home', 'hub', 'models--Qwen--Qwen2.5-tiny', 'snapshots', REVISION));
    for (const [name, body] of Object.entries(files))
      assert.deepEqual(await readFile(join(dir, name)), body, name);
    assert.ok(hub.requests.some((r) => r.startsWith(`GET /api/models/Qwen/Qwen2.5-tiny/tree/${REVISION}`)));

    // Staged already: no second download.
    const seen = hub.requests.length;
    assert.match((await stageHubModel(spec, python, probesDir))?.detail ?? '', /^already staged at /);
    assert.equal(hub.requests.length, seen);

    // Offline, with the hub gone, as a node at train time: huggingface_hub resolves the snapshot from
    // HF_HOME, and the environment probe reads and fingerprints it.
    await hub.stop();
    const script = [
      'import json, sys',
      'from huggingface_hub import snapshot_download',
      'from ragen_probes.environment_checks import check_model',
      `path = snapshot_download("Qwen/Qwen2.5-tiny", revision="${REVISION}")`,
      'info, failures = check_model(path)',
      'print(json.dumps({"path": path, "failures": failures, "revision": info["revision"]}))',
    ].join('\n');
    const { stdout } = await run(python, ['-c', script], {
      cwd: probesDir,
      env: { ...process.env, ...modelJobEnv(spec.model), HF_ENDPOINT: 'http://127.0.0.1:9' },
    });
    const offline = JSON.parse(stdout) as { path: string; failures: unknown[]; revision: string };
    assert.equal(offline.path, dir);
    assert.deepEqual(offline.failures, []);
    assert.equal(offline.revision, expectedFingerprint(files));
    hub = await startHubStandin(join(root, 'hub-repos'));
    process.env['HF_ENDPOINT'] = hub.endpoint;
  });

  it('an unknown repository or revision fails preflight with the fix; an unreachable hub is retried', async () => {
    const noRepo = await stageHubModel(specFor('Qwen/absent'), python, probesDir);
    assert.equal(noRepo?.ok, false);
    assert.match(noRepo?.detail ?? '', /RepositoryNotFoundError.*check model\.hub and model\.revision/);
    const noRevision = await stageHubModel(specFor('Qwen/Qwen2.5-tiny', 'f'.repeat(40)), python, probesDir);
    assert.equal(noRevision?.ok, false);
    assert.match(noRevision?.detail ?? '', /RevisionNotFoundError/);
    process.env['HF_ENDPOINT'] = 'http://127.0.0.1:9'; // nothing listens there
    const err = await stageHubModel(specFor('Qwen/other'), python, probesDir).then(
      () => assert.fail('staging from an unreachable hub succeeded'),
      (e: unknown) => e,
    );
    process.env['HF_ENDPOINT'] = hub.endpoint;
    assert.ok(err instanceof DomainError && !err.permanent, String(err));
    assert.equal(err.type, 'ModelHubUnavailable');
  });

  it('a path model and no model stage nothing', async () => {
    assert.equal(
      await stageHubModel(testSpec({ model: { path: '/x/m' } }, root), python, probesDir),
      undefined,
    );
    assert.equal(await stageHubModel(testSpec({}, root), python, probesDir), undefined);
  });
});
