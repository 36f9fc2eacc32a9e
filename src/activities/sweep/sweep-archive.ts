import { SweepManifestSchema, type SweepManifest } from '../../domain/sweep/sweep.js';
import { sweepCsv } from '../../domain/sweep/sweep-results.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { sweepManifestPaths } from '../../domain/spec/paths.js';
import { permanent } from '../common/failures.js';
import { writeOnce } from '../common/write-once.js';

/**
 * The sweep's archive: `<archiveDir>/<sweep>/<sweep id>/sweep.json` (zod SweepManifestSchema:
 * parameters, outcome, validation success and manifest path of every child, ranked) and
 * `sweep.csv` (the same table). Each file is written once via link(2) and never overwritten; a
 * retry with the same content succeeds. Quick profile: local file writes only.
 */
export function createArchiveSweep() {
  return async function archiveSweep(input: {
    manifest: SweepManifest;
    archiveDir: string;
  }): Promise<{ manifestPath: string; csvPath: string; sha256: string }> {
    const manifest = SweepManifestSchema.parse(input.manifest);
    const paths = sweepManifestPaths(input.archiveDir, manifest.sweep, manifest.temporal.workflowId);
    const written = await writeOnce(paths.manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const csv = await writeOnce(paths.csvPath, sweepCsv(manifest.children));
    for (const [path, w] of [
      [paths.manifestPath, written],
      [paths.csvPath, csv],
    ] as const) {
      if (w.existing)
        throw permanent(
          ErrorTypes.ManifestExists,
          `a different file already exists at ${path}; it is kept (sha256 ${w.existing})`,
        );
    }
    return { ...paths, sha256: written.sha256 };
  };
}
