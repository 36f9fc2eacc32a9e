import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { checkpointPath } from '../spec/paths.js';
import type { CheckpointRecord } from '../spec/results.js';

/** verl's tracker file, written last after every save (contract §3.1). */
export const TRACKER_FILE = 'latest_checkpointed_iteration.txt';

export async function readTracker(checkpointDir: string): Promise<number | undefined> {
  try {
    const text = (await readFile(join(checkpointDir, TRACKER_FILE), 'utf8')).trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}

/**
 * Hash every file of `global_step_N`; the record's own hash covers the sorted (path, hash) list.
 * `onFile` runs after each file (activities heartbeat there: a checkpoint can be many GB).
 */
export async function hashCheckpoint(checkpointDir: string, step: number, onFile?: (file: string) => void): Promise<CheckpointRecord> {
  const path = checkpointPath(checkpointDir, step);
  const files = [];
  for (const file of await filesUnder(path)) {
    files.push({ path: relative(path, file), bytes: (await stat(file)).size, sha256: await sha256File(file) });
    onFile?.(file);
  }
  const sha256 = createHash('sha256').update(files.map((f) => `${f.path} ${f.sha256}\n`).join('')).digest('hex');
  return { step, path, sha256, files };
}

/** Steps of the `global_step_N` folders present (complete or not). */
export async function checkpointSteps(checkpointDir: string): Promise<number[]> {
  try {
    return (await readdir(checkpointDir))
      .map((n) => /^global_step_(\d+)$/.exec(n)?.[1])
      .filter((s): s is string => s !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}
