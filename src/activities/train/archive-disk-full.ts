import { ErrorTypes } from '../../domain/failures/error-types.js';
import { permanent } from '../common/failures.js';

/**
 * A write to the run's archive folder, with a full volume (ENOSPC) made a permanent
 * ArchiveDiskFull naming the file: retried, the activity would fail the same way every 30 s for
 * as long as nobody frees space, and the run would neither end nor say why.
 */
export async function writingToArchive<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    throw permanent(
      ErrorTypes.ArchiveDiskFull,
      `no space left on the archive volume writing ${path}: free space there or move storage.archiveDir, then start the run again (its checkpoints are kept)`,
      { path },
    );
  }
}
