import { createHash } from 'node:crypto';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { checkpointPath } from '../../domain/spec/paths.js';
import type { CheckpointRecord } from '../../domain/run/results.js';

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

/** Read size: large reads keep sha256 (SHA-NI) rather than the syscalls the bottleneck. */
const HASH_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * sha256 of a file, streamed: the next chunk is read while the current one is hashed, with two
 * reused buffers (memory stays at 16 MiB whatever the file's size). `onChunk` sees each byte count.
 */
export async function sha256File(path: string, onChunk?: (bytes: number) => void): Promise<string> {
  const hash = createHash('sha256');
  const file = await open(path, 'r');
  try {
    const buffers = [Buffer.allocUnsafe(HASH_CHUNK_BYTES), Buffer.allocUnsafe(HASH_CHUNK_BYTES)];
    let turn = 0;
    let pending = file.read(buffers[0]!, 0, HASH_CHUNK_BYTES, null);
    for (;;) {
      const { bytesRead, buffer } = await pending;
      if (bytesRead === 0) break;
      turn ^= 1;
      pending = file.read(buffers[turn]!, 0, HASH_CHUNK_BYTES, null);
      hash.update(buffer.subarray(0, bytesRead));
      onChunk?.(bytesRead);
    }
  } finally {
    await file.close();
  }
  return hash.digest('hex');
}

/** Every regular file under `dir`, sorted (the order the record's own hash uses). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out.sort();
}

/** The record's own hash: sha256 over the sorted `<relative path> <file sha256>` lines. */
export function recordSha256(files: readonly { path: string; sha256: string }[]): string {
  return createHash('sha256')
    .update(files.map((f) => `${f.path} ${f.sha256}\n`).join(''))
    .digest('hex');
}

/**
 * Hash every file of `global_step_N`; the record's own hash covers the sorted (path, hash) list.
 * `onFile` runs after each file (activities heartbeat there: a checkpoint can be many GB); the
 * hashCheckpoints activity is the long-running, resumable way.
 */
export async function hashCheckpoint(
  checkpointDir: string,
  step: number,
  onFile?: (file: string) => void,
): Promise<CheckpointRecord> {
  const path = checkpointPath(checkpointDir, step);
  const files = [];
  for (const file of await filesUnder(path)) {
    const { size, mtimeMs } = await stat(file);
    files.push({ path: relative(path, file), bytes: size, mtimeMs, sha256: await sha256File(file) });
    onFile?.(file);
  }
  return { step, path, sha256: recordSha256(files), files };
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
