import { readFile } from 'node:fs/promises';
import { buildCodePackage } from '../../backends/ray/code-package.js';
import type { RayHeadApi } from '../../backends/ray/dashboard-client.js';
import { ensurePackageUploaded } from '../../backends/ray/py-modules.js';
import { ZIP_MAX_ENTRIES } from '../../backends/ray/stored-zip.js';
import { type ShippedCode, ShippedCodeSchema } from '../../domain/code/code.js';
import { treeSizeIssue } from '../../domain/code/code-tree.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { CODE_DIFF_FILE, codePackageStorePath, shippedCodePath } from '../../domain/spec/paths.js';
import { CodeTreeError, listCodeTree, readCodeTree } from '../../provenance/code-tree.js';
import { permanent } from '../common/failures.js';
import { makeSharedDir, sharedGroup } from '../common/shared-dirs.js';
import { writeOnce } from '../common/write-once.js';

async function readRecord(runDir: string): Promise<ShippedCode | undefined> {
  const text = await readFile(shippedCodePath(runDir), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : ShippedCodeSchema.parse(JSON.parse(text));
}

/**
 * Pack `spec.code` once per run (preflight): the archive into the content-addressed store under
 * storage.archiveDir, the diff of a dirty git tree and the record (code.json) next to the manifest,
 * all write-once. A retry, and every later job of the run, reads the record: the tree is packed
 * when the run starts, and an edit after that does not change what the run ships.
 * Bad input (missing path, not a folder, over code.maxSizeMb) fails permanently with InvalidSpec.
 */
export async function snapshotCode(spec: ExperimentSpec, runDir: string): Promise<ShippedCode | undefined> {
  if (!spec.code) return undefined;
  const recorded = await readRecord(runDir);
  if (recorded) return recorded;
  const { path, exclude, maxSizeMb } = spec.code;
  const tree = await listCodeTree(path, exclude).catch((err: unknown) => {
    if (err instanceof CodeTreeError) throw permanent(ErrorTypes.InvalidSpec, `${err.field}: ${err.message}`);
    throw err;
  });
  const tooBig = treeSizeIssue(path, tree.files, { maxSizeMb, maxEntries: ZIP_MAX_ENTRIES });
  if (tooBig) throw permanent(ErrorTypes.InvalidSpec, `code.maxSizeMb: ${tooBig}`);
  const pkg = buildCodePackage(await readCodeTree(tree));
  // The run's folder is made as the other stages make it: shared with the Ray Pods' group.
  await makeSharedDir(runDir, sharedGroup(spec));
  await writeOnce(codePackageStorePath(spec.storage.archiveDir, pkg.name), pkg.bytes);
  const git = tree.git;
  const diffWritten = git?.diff ? await writeOnce(`${runDir}/${CODE_DIFF_FILE}`, git.diff) : undefined;
  const record: ShippedCode = {
    path,
    package: pkg.name,
    uri: pkg.uri,
    sha256: pkg.sha256,
    archiveBytes: pkg.bytes.length,
    treeBytes: pkg.treeBytes,
    files: pkg.files,
    listedBy: tree.listedBy,
    exclude,
    ...(git
      ? {
          git: {
            commit: git.commit,
            dirty: git.dirty,
            ...(diffWritten && !diffWritten.existing ? { diff: CODE_DIFF_FILE } : {}),
            ...(git.untracked.length > 0 ? { untracked: git.untracked } : {}),
          },
        }
      : {}),
  };
  const written = await writeOnce(shippedCodePath(runDir), `${JSON.stringify(record, null, 1)}\n`);
  // Another attempt packed first (the tree changed in between): the run ships what it recorded.
  return written.existing ? ((await readRecord(runDir)) ?? record) : record;
}

/**
 * The runtime_env working_dir of a job of this run: the recorded archive, uploaded through the
 * dashboard's package API unless the cluster holds it (a fresh cluster, or one whose GCS dropped it
 * after the last job that used it). Undefined for a spec without `code`. Idempotent.
 */
export async function shippedWorkingDir(
  head: RayHeadApi,
  spec: ExperimentSpec,
  runDir: string,
): Promise<string | undefined> {
  const shipped = await snapshotCode(spec, runDir);
  if (!shipped) return undefined;
  const store = codePackageStorePath(spec.storage.archiveDir, shipped.package);
  const bytes = await readFile(store).catch(() => undefined);
  if (!bytes)
    throw permanent(
      ErrorTypes.InvalidSpec,
      `the archive of ${shipped.path} recorded for this run (${store}) is gone; start the run again to pack the tree anew`,
    );
  await ensurePackageUploaded(head, { name: shipped.package, bytes });
  return shipped.uri;
}
