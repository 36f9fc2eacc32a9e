import assert from 'node:assert/strict';
import { mkdir, mkdtemp, stat, chmod, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { makeSharedDir, sharedGroup, writeSharedFile } from '../../src/activities/common/shared-dirs.js';

/** The run's folders the worker and the (non-root) Ray Pods share, on a real file system. */
const asRoot = process.getuid?.() === 0;

describe('shared folders (2775, the Pods group)', () => {
  it('creates every missing folder 2775 whatever the umask, and leaves existing ones alone', async () => {
    const root = await mkdtemp(join(tmpdir(), 'shared-dirs-'));
    await chmod(root, 0o700);
    const old = process.umask(0o077);
    try {
      await makeSharedDir(join(root, 'a', 'b', 'c'), undefined);
    } finally {
      process.umask(old);
    }
    for (const d of ['a', 'a/b', 'a/b/c']) assert.equal((await stat(join(root, d))).mode & 0o7777, 0o2775, d);
    assert.equal((await stat(root)).mode & 0o7777, 0o700, 'the existing folder is not changed');
    await writeSharedFile(join(root, 'a', 'nonce'), 'x');
    assert.equal((await stat(join(root, 'a', 'nonce'))).mode & 0o777, 0o664);
  });

  it(
    'a root worker gives each created folder the Pods group (fsGroup, else runAsGroup)',
    { skip: !asRoot && 'needs root (chown)' },
    async () => {
      const root = await mkdtemp(join(tmpdir(), 'shared-dirs-'));
      await mkdir(join(root, 'exists'));
      await makeSharedDir(join(root, 'exists', 'run', 'ckpt'), 4321);
      assert.equal((await stat(join(root, 'exists'))).gid, 0, 'an existing folder keeps its group');
      for (const d of ['exists/run', 'exists/run/ckpt'])
        assert.equal((await stat(join(root, d))).gid, 4321, d);
      // A file or folder made inside by anyone takes the group (setgid).
      await writeFile(join(root, 'exists', 'run', 'ckpt', 'f'), 'x');
      assert.equal((await stat(join(root, 'exists', 'run', 'ckpt', 'f'))).gid, 4321);
      assert.equal(sharedGroup({ kuberay: { securityContext: { fsGroup: 7, runAsGroup: 8 } } } as never), 7);
      assert.equal(sharedGroup({ kuberay: { securityContext: { runAsGroup: 8 } } } as never), 8);
      assert.equal(sharedGroup({} as never), undefined);
    },
  );
});
