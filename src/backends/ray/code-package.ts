import { createHash } from 'node:crypto';
import { type ZipEntry, zipArchive } from './stored-zip.js';

/**
 * A tree shipped as a Ray job's runtime_env `working_dir`: a zip of the tree's files at its top
 * level (Ray unpacks a `gcs://` zip as it is and makes the folder the job's cwd and the head of
 * its workers' PYTHONPATH), named `_ray_pkg_<sha1 of the zip>.zip` like the probe package.
 * Deterministic: entries sorted by path, fixed times, modes 0644/0755, no owners, deflated.
 */
export interface CodePackage {
  name: string;
  uri: string;
  bytes: Buffer;
  sha256: string;
  /** Uncompressed bytes of the files and their count. */
  treeBytes: number;
  files: number;
}

export function buildCodePackage(entries: readonly ZipEntry[]): CodePackage {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const bytes = zipArchive(sorted, { deflate: true });
  const name = `_ray_pkg_${createHash('sha1').update(bytes).digest('hex')}.zip`;
  return {
    name,
    uri: `gcs://${name}`,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    treeBytes: sorted.reduce((sum, e) => sum + e.data.length, 0),
    files: sorted.length,
  };
}
