import { createHash } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ErrorTypes } from '../spec/error-types.js';
import { permanent } from './failures.js';

/**
 * Write `text` at `path` exactly once, atomically: link(2) fails with EEXIST instead of
 * replacing, so an existing file is never overwritten. A retry that finds the same bytes
 * succeeds; different bytes are a permanent ManifestExists. Returns the sha256 of the text.
 */
export async function writeOnce(path: string, text: string): Promise<string> {
  const sha256 = createHash('sha256').update(text).digest('hex');
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${sha256.slice(0, 12)}.tmp`;
  await writeFile(tmp, text);
  try {
    await link(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const existing = createHash('sha256').update(await readFile(path)).digest('hex');
    if (existing !== sha256) throw permanent(ErrorTypes.ManifestExists, `a different file already exists at ${path}; it is kept (sha256 ${existing})`);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  return sha256;
}
