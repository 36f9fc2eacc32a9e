import type { ExperimentSpec } from '../spec/experiment.js';

/** Saves a run makes: every saveFreq steps and the last step (all kept: max_*_ckpt_to_keep=null). */
export function expectedSaves(
  trainer: Pick<ExperimentSpec['trainer'], 'totalTrainingSteps' | 'saveFreq'>,
  fromStep = 0,
): number {
  const { totalTrainingSteps: total, saveFreq } = trainer;
  if (fromStep >= total) return 0;
  const periodic = Math.floor(total / saveFreq) - Math.floor(fromStep / saveFreq);
  return periodic + (total % saveFreq === 0 ? 0 : 1);
}

/** Bytes as GB with two decimals, as the messages about checkpoint space print them. */
export const formatGb = (bytes: number | undefined) =>
  bytes === undefined ? 'unknown' : `${(bytes / 1e9).toFixed(2)} GB`;

/**
 * Whether the checkpoint volume can hold the run's checkpoints: a warning (never a refusal: the
 * estimate is rough) when free space is below saves x the size of one checkpoint.
 */
export function checkpointSpaceWarning(
  saves: number,
  perCheckpointBytes: number,
  freeBytes: number,
  dir: string,
): string | undefined {
  const needed = saves * perCheckpointBytes;
  if (freeBytes >= needed) return undefined;
  return `${dir} has ${formatGb(freeBytes)} free, below the ${formatGb(needed)} the run's ${saves} checkpoints of ~${formatGb(perCheckpointBytes)} need; free space or move storage.checkpointDir, or the trainer will fail with a full disk (CheckpointDiskFull)`;
}
