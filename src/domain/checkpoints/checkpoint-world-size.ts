/**
 * verl names an FSDP checkpoint's shards by the world size that saved them
 * (`actor/model_world_size_<W>_rank_<r>.pt`, also optim_ and extra_state_; contract §3.1) and loads
 * only the shards of the current world size: a checkpoint resumed on another GPU count fails deep
 * in the trainer. Pure: read from the checkpoint's file names.
 */
const SHARD = /(?:^|\/)(?:model|optim|extra_state)_world_size_(\d+)_rank_\d+\.\w+$/;

/** The world sizes a checkpoint's shards were saved with (normally one); empty when it has no verl shards. */
export function checkpointWorldSizes(files: readonly string[]): number[] {
  const sizes = new Set<number>();
  for (const f of files) {
    const m = SHARD.exec(f);
    if (m?.[1]) sizes.add(Number(m[1]));
  }
  return [...sizes].sort((a, b) => a - b);
}

/** Why `checkpoint` cannot be resumed by a run of `trainer`'s shape, with the fix; undefined when it can. */
export function worldSizeMismatch(
  checkpoint: string,
  files: readonly string[],
  trainer: { nnodes: number; nGpusPerNode: number },
): string | undefined {
  const saved = checkpointWorldSizes(files);
  const want = trainer.nnodes * trainer.nGpusPerNode;
  if (saved.length === 0 || (saved.length === 1 && saved[0] === want)) return undefined;
  const by = saved.length === 1 ? `${saved[0]} GPUs` : `world sizes ${saved.join(' and ')} (mixed shards)`;
  return `checkpoint ${checkpoint} was saved by ${by} (verl names its shards model_world_size_<W>_rank_<r>), but this run has trainer.nnodes x trainer.nGpusPerNode = ${trainer.nnodes} x ${trainer.nGpusPerNode} = ${want}, and verl loads only the shards of its own world size; resume with the shape it was saved with${saved.length === 1 ? ` (nnodes x nGpusPerNode = ${saved[0]}, and worker groups to match)` : ''}, or start from scratch without resuming it`;
}
