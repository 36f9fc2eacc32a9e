import { ErrorTypes } from '../../domain/failures/error-types.js';
import { ManifestSchema, type Manifest, type ManifestDraft } from '../../domain/run/manifest.js';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { MetricsSummarySchema, type MetricsSummary } from '../../domain/train/metrics-series.js';
import { ledgerPath, manifestPath, metricsSummaryPath } from '../../domain/spec/paths.js';
import type { CheckpointRecord } from '../../domain/run/results.js';
import { codeProvenance } from '../code/code-source.js';
import { type ArchiveUploadHeartbeat, type ArchiveUploadResult, uploadArchive } from './archive-upload.js';
import { permanent } from '../common/failures.js';
import { previousDetails } from '../common/heartbeat-loop.js';
import { writeOnce } from '../common/write-once.js';

/**
 * Stage 7. Record the complete checkpoints with the hashes the hashCheckpoints activity put in the
 * ledger (`checkpoints`), and where the trained code came from (`code`: code-source.ts). Validate the manifest with its zod schema and write it atomically,
 * exactly once: a retry that finds the same content succeeds, a different existing manifest is
 * never overwritten (ManifestExists).
 * With storage.objectStore, the run's archive folder and the checkpoints storage.retain keeps are
 * then copied there (archive-upload.ts): skipped when present, resumed from the heartbeated parts.
 */
export function createArchive() {
  return async function archive(input: {
    draft: ManifestDraft;
    archiveDir: string;
    checkpoints: CheckpointRecord[];
  }): Promise<{
    manifestPath: string;
    sha256: string;
    checkpoints: number;
    objectStore?: ArchiveUploadResult;
  }> {
    const { draft, checkpoints } = input;
    const path = manifestPath(input.archiveDir, draft.experiment, draft.temporal.workflowId);
    const metrics = await readMetricsSummary(dirname(path));
    const code = await codeProvenance(dirname(path), draft);
    // writtenAt is fixed by the workflow's stage record, so a retry produces the same bytes.
    const manifest: Manifest = ManifestSchema.parse({
      schemaVersion: 1,
      ...draft,
      ...code,
      ...(metrics ? { metrics } : {}),
      checkpoints,
      writtenAt: draft.stages.at(-1)?.startedAt ?? '',
    });
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    const { sha256, existing } = await writeOnce(path, text); // never overwrite a manifest
    if (existing)
      throw permanent(
        ErrorTypes.ManifestExists,
        `a different manifest already exists at ${path}; it is kept (sha256 ${existing})`,
      );
    const { storage } = draft.resolvedSpec;
    if (!storage.objectStore) return { manifestPath: path, sha256, checkpoints: checkpoints.length };
    const objectStore = await uploadArchive(
      {
        objectStore: storage.objectStore,
        storage,
        runDir: dirname(path),
        checkpoints,
        // The ledger of the run's checkpoint folder: a campaign's (its attempts share it) or the run's own.
        ledgerPath: ledgerPath(storage.archiveDir, draft.experiment, basename(draft.checkpointDir)),
      },
      previousDetails<ArchiveUploadHeartbeat>(),
    );
    return { manifestPath: path, sha256, checkpoints: checkpoints.length, objectStore };
  };
}

/** The train activity's summary of the trainer's metrics next to the manifest; none when it never trained. */
async function readMetricsSummary(runDir: string): Promise<MetricsSummary | undefined> {
  let text: string;
  try {
    text = await readFile(metricsSummaryPath(runDir), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = MetricsSummarySchema.safeParse(JSON.parse(text));
  return parsed.success && Object.keys(parsed.data).length > 0 ? parsed.data : undefined;
}
