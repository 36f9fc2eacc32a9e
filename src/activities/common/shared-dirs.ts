import { chmod, chown, mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';

/**
 * Directories the worker and the Ray Pods both write (a run's checkpoint and archive folders) are
 * made group-writable with setgid (2775): files and folders made inside inherit the group, so the
 * Pods' user (a member of it through fsGroup or runAsGroup) and the worker share them whichever of
 * them is root. mkdir's mode goes through the umask, so the mode is set with chmod.
 */
export const SHARED_DIR_MODE = 0o2775;
/** Files the worker writes for the Pods to read (the storage proof's nonce). */
export const SHARED_FILE_MODE = 0o664;

/** The group the Ray Pods share storage through: fsGroup, else runAsGroup; none on the local backend. */
export function sharedGroup(spec: Pick<ExperimentSpec, 'kuberay'>): number | undefined {
  const sc = spec.kuberay?.securityContext;
  return sc?.fsGroup ?? sc?.runAsGroup;
}

/**
 * Create `dir` and any missing parent, each 2775; a root worker also gives each created folder
 * the Pods' group (a non-root worker cannot, and relies on the setgid bit of the folder above).
 * Existing folders are left as they are (they may belong to someone else). Idempotent.
 */
export async function makeSharedDir(dir: string, group: number | undefined): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    if (await exists(d)) break;
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    await mkdir(d, { recursive: true });
    if (group !== undefined && process.getuid?.() === 0) await chown(d, -1, group);
    await chmod(d, SHARED_DIR_MODE);
  }
}

/** Write a file the Pods read: group-readable whatever the worker's umask. */
export async function writeSharedFile(path: string, data: string): Promise<void> {
  await writeFile(path, data);
  await chmod(path, SHARED_FILE_MODE);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
