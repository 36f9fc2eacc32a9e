import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RayHeadApi } from './dashboard-client.js';
import { storedZip } from './stored-zip.js';

/**
 * A Python package shipped with a Ray job as a `runtime_env` `py_modules` entry, the way Ray's own
 * job SDK ships a prebuilt zip (ray/_private/runtime_env/packaging.py, `get_uri_for_package`): the
 * name is `_ray_pkg_<sha1 of the zip>.zip`, the URI `gcs://<name>`, and the archive holds the
 * package directory at its top level (`ragen_probes/__init__.py`, …). Ray unpacks a `gcs://` zip
 * as it is and puts the unpacked directory on the job's PYTHONPATH, for the driver and every worker.
 */
export interface PyModulesPackage {
  /** `_ray_pkg_<sha1>.zip`: the name the dashboard's package endpoint takes. */
  name: string;
  /** `gcs://_ray_pkg_<sha1>.zip`: what `runtime_env.py_modules` lists. */
  uri: string;
  bytes: Buffer;
  /** Paths inside the archive, in archive order. */
  files: string[];
}

/** Only the package's sources travel: no bytecode caches, no hidden files. */
const shipped = (name: string) => name.endsWith('.py') && !name.startsWith('.');

async function sourceFiles(dir: string, prefix: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries) {
    if (e.isDirectory() && e.name !== '__pycache__' && !e.name.startsWith('.'))
      out.push(...(await sourceFiles(join(dir, e.name), `${prefix}${e.name}/`)));
    else if (e.isFile() && shipped(e.name)) out.push(`${prefix}${e.name}`);
  }
  return out;
}

/** Zip `<parentDir>/<packageName>` deterministically (sorted paths, fixed timestamps). */
export async function buildPyModulesPackage(
  parentDir: string,
  packageName: string,
): Promise<PyModulesPackage> {
  const files = (await sourceFiles(join(parentDir, packageName), `${packageName}/`)).sort();
  if (!files.includes(`${packageName}/__init__.py`))
    throw new Error(`${join(parentDir, packageName)} is not a Python package (no __init__.py)`);
  const bytes = storedZip(
    await Promise.all(files.map(async (name) => ({ name, data: await readFile(join(parentDir, name)) }))),
  );
  const name = `_ray_pkg_${createHash('sha1').update(bytes).digest('hex')}.zip`;
  return { name, uri: `gcs://${name}`, bytes, files };
}

/**
 * Upload the package unless the cluster has it: GET first (which also pins the package in the GCS
 * for a while, as Ray's SDK relies on), PUT only on 404. Returns whether it was uploaded.
 */
export async function ensurePackageUploaded(
  head: RayHeadApi,
  pkg: { name: string; bytes: Buffer },
): Promise<{ uploaded: boolean }> {
  if (await head.packageExists(pkg.name)) return { uploaded: false };
  await head.uploadPackage(pkg.name, pkg.bytes);
  return { uploaded: true };
}
