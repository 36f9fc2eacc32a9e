import { randomBytes } from 'node:crypto';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const MiB = 1024 * 1024;

/** Write `bytes` of a random block repeated, with the file index mixed in so files differ. */
async function fill(path: string, bytes: number, block: Buffer, index: number): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (let written = 0; written < bytes; written += block.length) {
      block.writeUInt32LE(index, 0);
      block.writeUInt32LE(written / block.length, 4);
      await file.write(block, 0, Math.min(block.length, bytes - written));
    }
  } finally {
    await file.close();
  }
}

/** What writeSyntheticCheckpoint wrote. */
export interface SyntheticCheckpoint {
  bytes: number;
  files: number;
  shards: number;
  shardBytes: number;
  smallFiles: number;
}

/**
 * A checkpoint of verl's shape at a real size, for the benches that read or copy one: FSDP-like
 * shards of 80 MiB under `actor/` plus small files of 1 MiB under `actor/huggingface/` (256 per
 * 4 GiB), in `<checkpointDir>/global_step_<step>`, and the tracker file naming that step.
 */
export async function writeSyntheticCheckpoint(
  checkpointDir: string,
  step: number,
  gib: number,
): Promise<SyntheticCheckpoint> {
  const smallFiles = Math.round(256 * (gib / 4));
  const shardBytes = 80 * MiB;
  const shards = Math.max(1, Math.round((gib * 1024 * MiB - smallFiles * MiB) / shardBytes));
  const dir = join(checkpointDir, `global_step_${step}`);
  await mkdir(join(dir, 'actor', 'huggingface'), { recursive: true });
  const block = randomBytes(8 * MiB);
  for (let i = 0; i < shards; i++)
    await fill(join(dir, 'actor', `model_world_size_${shards}_rank_${i}.pt`), shardBytes, block, i);
  for (let i = 0; i < smallFiles; i++)
    await fill(join(dir, 'actor', 'huggingface', `part-${i}.bin`), MiB, block, shards + i);
  await writeFile(join(checkpointDir, 'latest_checkpointed_iteration.txt'), `${step}\n`);
  return {
    bytes: shards * shardBytes + smallFiles * MiB,
    files: shards + smallFiles,
    shards,
    shardBytes,
    smallFiles,
  };
}
