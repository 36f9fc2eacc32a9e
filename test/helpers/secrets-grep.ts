import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Every file under `roots` (recursively; sockets and unreadable files skipped) whose bytes contain
 * one of `secrets`, as `path: NAME`. For the test that a run given credentials wrote none of them.
 */
export async function filesContaining(roots: string[], secrets: Record<string, string>): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const bytes = await readFile(path).catch(() => undefined);
        for (const [name, value] of Object.entries(secrets))
          if (bytes?.includes(value)) found.push(`${path}: ${name}`);
      }
    }
  };
  for (const root of roots) await walk(root);
  return found;
}
