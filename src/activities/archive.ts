import { createHash } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorTypes } from '../spec/error-types.js';
import { ManifestSchema, type Manifest, type ManifestDraft } from '../spec/manifest.js';
import { checkpointSteps, hashCheckpoint, readTracker } from './checkpoints.js';
import { permanent } from './failures.js';

export function manifestPath(archiveDir: string, experiment: string, workflowId: string): string {
  return join(archiveDir, experiment, workflowId, 'manifest.json');
}

/**
 * Stage 7. Hash every checkpoint at or below the tracker's step, validate the manifest with its zod
 * schema and write it atomically, exactly once: a retry that finds the same content succeeds, a
 * different existing manifest is never overwritten (ManifestExists).
 */
export function createArchive() {
  return async function archive(input: { draft: ManifestDraft; archiveDir: string }): Promise<{ manifestPath: string; sha256: string; checkpoints: number }> {
    const { draft } = input;
    const tracker = await readTracker(draft.checkpointDir);
    const steps = (await checkpointSteps(draft.checkpointDir)).filter((s) => tracker !== undefined && s <= tracker);
    const checkpoints = [];
    for (const step of steps) checkpoints.push(await hashCheckpoint(draft.checkpointDir, step));
    // writtenAt is fixed by the workflow's stage record, so a retry produces the same bytes.
    const manifest: Manifest = ManifestSchema.parse({ schemaVersion: 1, ...draft, checkpoints, writtenAt: draft.stages.at(-1)?.startedAt ?? '' });
    const text = `${JSON.stringify(manifest, null, 2)}\n`;
    const sha256 = createHash('sha256').update(text).digest('hex');
    const path = manifestPath(input.archiveDir, draft.experiment, draft.temporal.workflowId);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${sha256.slice(0, 12)}.tmp`;
    await writeFile(tmp, text);
    try {
      await link(tmp, path); // fails with EEXIST instead of replacing: never overwrite a manifest
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const existing = createHash('sha256').update(await readFile(path)).digest('hex');
      if (existing !== sha256) throw permanent(ErrorTypes.ManifestExists, `a different manifest already exists at ${path}; it is kept (sha256 ${existing})`);
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    await writeFile(`${path}.sha256`, `${sha256}  manifest.json\n`);
    return { manifestPath: path, sha256, checkpoints: checkpoints.length };
  };
}
