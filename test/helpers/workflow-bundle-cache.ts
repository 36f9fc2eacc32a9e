import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { REPO_ROOT } from '../../src/config/config.js';

/**
 * The workflow bundle of the tests, built once for all test processes (each test file is one): kept
 * in node_modules/.cache under the hash of every file of src/ and the lockfile, which covers all
 * the bundle is made of (the workflows, what they import, the SDK). About 3.5 s of CPU per test
 * file otherwise. Only the newest bundle is kept.
 */
const CACHE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'ragen-workflow-bundle');

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

async function sourcesHash(): Promise<string> {
  const h = createHash('sha256');
  const files = [...(await filesUnder(join(REPO_ROOT, 'src'))), join(REPO_ROOT, 'package-lock.json')].sort();
  for (const f of files)
    h.update(`${relative(REPO_ROOT, f)}\0`)
      .update(await readFile(f))
      .update('\0');
  return h.digest('hex').slice(0, 24);
}

export async function cachedWorkflowBundle(
  build: () => Promise<WorkflowBundleWithSourceMap>,
): Promise<WorkflowBundleWithSourceMap> {
  const key = await sourcesHash();
  const file = join(CACHE_DIR, `${key}.json`);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    // not built yet for these sources
  }
  const bundle = await build();
  await mkdir(CACHE_DIR, { recursive: true });
  // Written whole, then renamed: a test process reading at the same time sees all of it or none.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ code: bundle.code, sourceMap: bundle.sourceMap }));
  await rename(tmp, file);
  for (const old of await readdir(CACHE_DIR))
    if (old !== `${key}.json` && !old.endsWith('.tmp')) await rm(join(CACHE_DIR, old), { force: true });
  return bundle;
}
