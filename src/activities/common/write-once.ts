import { createHash } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Write `text` at `path` exactly once, atomically: link(2) fails with EEXIST instead of replacing.
 * A retry that finds the same bytes succeeds; different existing bytes are kept and reported.
 */
export async function writeOnce(
  path: string,
  text: string | Buffer,
): Promise<{ sha256: string; existing?: string }> {
  const sha256 = createHash('sha256').update(text).digest('hex');
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${sha256.slice(0, 12)}.tmp`;
  await writeFile(tmp, text);
  try {
    await link(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const existing = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
    if (existing !== sha256) return { sha256, existing };
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await writeFile(`${path}.sha256`, `${sha256}  ${path.split('/').at(-1)}\n`);
  return { sha256 };
}

export async function sha256OfFile(path: string): Promise<string | undefined> {
  try {
    return createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  } catch {
    return undefined;
  }
}
