import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLatestCompleteCheckpoint } from '../../src/activities/campaign/campaign-checkpoints.js';
import { createHashCheckpoints } from '../../src/activities/checkpoints/hash-checkpoints.js';
import { authTokenPath, readAuthToken, writeNewAuthToken } from '../../src/backends/local/auth-token.js';
import { LocalBackend } from '../../src/backends/local/local-backend.js';
import { pidAlive } from '../../src/backends/local/processes.js';
import { STATE_FILE } from '../../src/backends/local/state.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { inActivityContext } from '../helpers/activity-context.js';
import { testSpec } from '../helpers/specs.js';

/**
 * State files are trusted only as far as they should be: a corrupt or foreign local cluster state
 * file or campaign ledger is reported (StateFileInvalid, naming the file), left byte for byte as
 * it was, and never followed: no pid it names is signalled, no directory it names is removed.
 */
const owner = { experiment: 'e', workflowId: 'wf', runId: 'r', attempt: 0 };
const handleOf = (name: string): ClusterHandle => ({ backend: 'local', name, owner });

function invalid(path: string, why: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.type, ErrorTypes.StateFileInvalid);
    assert.equal(err.permanent, true);
    assert.ok(err.message.includes(path), err.message);
    assert.match(err.message, why);
    assert.match(err.message, /left as it is|not used/);
    return true;
  };
}

describe('local cluster state files', () => {
  it('a corrupt file and a foreign one are reported by every backend call, left as they are, and never followed', async (t) => {
    const root = await mkdtemp(join(tmpdir(), 'state-files-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const runRoot = join(root, 'run');
    const backend = new LocalBackend({
      runRoot,
      rayBin: '/nonexistent/ray',
      python: 'python',
      nodeIp: '127.0.0.1',
    });

    // Corrupt: half a file.
    const corruptPath = join(runRoot, 'corrupt-a0', STATE_FILE);
    await mkdir(join(runRoot, 'corrupt-a0'), { recursive: true });
    await writeFile(corruptPath, '{"name": "corrupt-a0", "nodes": [');

    // Foreign: well-formed, but another cluster's name, a temp dir outside the run root and a live
    // process that is not a Ray node of this cluster (a sleep this test started).
    const victim = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    t.after(() => {
      if (victim.pid) process.kill(victim.pid, 'SIGKILL');
    });
    const precious = join(root, 'precious');
    await mkdir(precious);
    await writeFile(join(precious, 'keep'), 'user data');
    const foreignPath = join(runRoot, 'foreign-a0', STATE_FILE);
    await mkdir(join(runRoot, 'foreign-a0'), { recursive: true });
    const foreign = {
      name: 'someone-else',
      owner,
      createdAt: 't',
      nodeIp: '127.0.0.1',
      gcsPort: 1,
      dashboardUrl: 'http://127.0.0.1:1',
      tempDir: precious,
      complete: true,
      nodes: [{ role: 'head', group: 'head', index: 0, pid: victim.pid, gpus: 0, cpus: 1 }],
    };
    await writeFile(foreignPath, JSON.stringify(foreign));
    // Well-formed but for pid 1 (kill(-1) would signal every process).
    const pidOnePath = join(runRoot, 'pid-one-a0', STATE_FILE);
    await mkdir(join(runRoot, 'pid-one-a0'), { recursive: true });
    await writeFile(
      pidOnePath,
      JSON.stringify({
        ...foreign,
        name: 'pid-one-a0',
        tempDir: join(runRoot, 'x'),
        nodes: [{ ...foreign.nodes[0], pid: 1 }],
      }),
    );
    const bytes = async () =>
      Promise.all([corruptPath, foreignPath, pidOnePath].map((p) => readFile(p, 'utf8')));
    const before = await bytes();

    const cases = [
      ['corrupt-a0', corruptPath, /is not JSON/],
      ['foreign-a0', foreignPath, /names cluster someone-else, not foreign-a0/],
      ['pid-one-a0', pidOnePath, /nodes\.0\.pid/],
    ] as const;
    for (const [name, path, why] of cases) {
      await assert.rejects(backend.describeCluster(handleOf(name)), invalid(path, why));
      await assert.rejects(
        backend.createCluster({ name, spec: testSpec({}, root), owner }),
        invalid(path, why),
        'create neither rebuilds nor stops what the file names',
      );
      // Teardown stops only processes marked as this cluster's (none here) and keeps the file.
      assert.deepEqual(await backend.deleteCluster(handleOf(name)), { alreadyGone: false });
    }
    const listed = await backend.listClusters();
    for (const [name, path] of cases) {
      const found = listed.find((c) => c.handle.name === name);
      assert.equal(found?.owner, undefined, 'the reaper gets no owner, so it reports rather than deletes');
      assert.ok(found?.problem?.includes(path), found?.problem);
    }
    assert.deepEqual(await bytes(), before, 'every file is left byte for byte');
    assert.equal(pidAlive(victim.pid ?? 0), true, 'the pid a foreign file names was not signalled');
    assert.equal(victim.signalCode, null);
    assert.equal(await readFile(join(precious, 'keep'), 'utf8'), 'user data', 'its temp dir was not removed');
  });
});

describe('local Ray auth token file', () => {
  it('is written 0600 and read back; one others may read, or that holds something else, is refused', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'token-file-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    assert.equal(await readAuthToken(dir), undefined, 'no file: no token');
    const token = await writeNewAuthToken(dir);
    assert.equal((await stat(authTokenPath(dir))).mode & 0o777, 0o600);
    assert.equal(await readAuthToken(dir), token);
    await chmod(authTokenPath(dir), 0o644);
    await assert.rejects(
      readAuthToken(dir),
      invalid(authTokenPath(dir), /readable or writable by others \(mode 644/),
    );
    await chmod(authTokenPath(dir), 0o600);
    await writeFile(authTokenPath(dir), 'not a token');
    await assert.rejects(
      readAuthToken(dir),
      invalid(authTokenPath(dir), /does not hold a token this product wrote/),
    );
  });
});

describe('campaign ledger', () => {
  it('a corrupt ledger and a foreign one (checkpoints outside the campaign) fail both ledger activities once, naming the file, and stay as they are', async (t) => {
    const root = await mkdtemp(join(tmpdir(), 'ledger-files-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const checkpointDir = join(root, 'ckpt');
    await mkdir(join(checkpointDir, 'global_step_10'), { recursive: true });
    await writeFile(join(checkpointDir, 'global_step_10', 'model.npz'), 'w');
    await writeFile(join(checkpointDir, 'latest_checkpointed_iteration.txt'), '10\n');
    const corrupt = join(root, 'corrupt.json');
    await writeFile(corrupt, '{"checkpoints": [{"step": "ten"}]}');
    const foreign = join(root, 'foreign.json');
    const elsewhere = join(root, 'other-campaign', 'global_step_10');
    await writeFile(
      foreign,
      JSON.stringify({
        checkpoints: [{ step: 10, path: elsewhere, sha256: 'a'.repeat(64), files: [], firstSeenAt: 't0' }],
      }),
    );
    const before = [await readFile(corrupt, 'utf8'), await readFile(foreign, 'utf8')];
    const latest = inActivityContext(createLatestCompleteCheckpoint()).run;
    const hash = inActivityContext(createHashCheckpoints()).run;
    for (const [ledgerPath, why] of [
      [corrupt, /is not a checkpoint ledger \(checkpoints\.0\.step/],
      [foreign, /names checkpoint .*other-campaign\/global_step_10, outside this campaign's checkpoint dir/],
    ] as const) {
      await assert.rejects(latest({ checkpointDir, ledgerPath, now: 't1' }), invalid(ledgerPath, why));
      await assert.rejects(hash({ checkpointDir, ledgerPath, now: 't1' }), invalid(ledgerPath, why));
    }
    assert.deepEqual([await readFile(corrupt, 'utf8'), await readFile(foreign, 'utf8')], before);
    await assert.rejects(stat(`${corrupt}.${process.pid}.tmp`), 'no rewrite was started');
  });
});
