import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TrainLogStore } from '../../src/activities/train/train-log-store.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { trainLogPath, trainLogStatePath } from '../../src/domain/spec/paths.js';
import { DomainError } from '../../src/errors/domain-error.js';

/**
 * Found by bench/soak.ts (seed 113, checkpoints and archive on one full tmpfs): the train activity
 * failed with a plain ENOSPC on its own archive writes and Temporal retried it every 30 s with no
 * end. A real ENOSPC here: the file written goes through a symlink to /dev/full.
 */
const dir = await mkdtemp(join(tmpdir(), 'archive-full-'));
after(() => rm(dir, { recursive: true, force: true }));

describe('train activity archive writes on a full volume', () => {
  it('fail once, permanent ArchiveDiskFull naming the file', async () => {
    const runDir = join(dir, 'run');
    await mkdir(runDir, { recursive: true });
    const stateTmp = `${trainLogStatePath(trainLogPath(runDir, 'c-a0'))}.tmp`;
    await symlink('/dev/full', stateTmp);
    await assert.rejects(TrainLogStore.open(runDir, 'c-a0'), (err: unknown) => {
      assert.ok(err instanceof DomainError, String(err));
      assert.equal(err.type, ErrorTypes.ArchiveDiskFull);
      assert.equal(err.permanent, true);
      assert.match(
        err.message,
        /no space left on the archive volume writing .*state\.json\.tmp.*storage\.archiveDir/,
      );
      return true;
    });
  });

  it('other write errors stay as they are (retried)', async () => {
    const runDir = join(dir, 'run2');
    await mkdir(runDir, { recursive: true });
    // A directory where the temp file goes: EISDIR, not a full disk.
    await mkdir(`${trainLogStatePath(trainLogPath(runDir, 'c-a0'))}.tmp`);
    await assert.rejects(TrainLogStore.open(runDir, 'c-a0'), (err: unknown) => {
      assert.ok(!(err instanceof DomainError));
      assert.equal((err as NodeJS.ErrnoException).code, 'EISDIR');
      return true;
    });
  });
});
