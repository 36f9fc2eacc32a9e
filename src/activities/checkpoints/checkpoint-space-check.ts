import { Context } from '@temporalio/activity';
import { stat, statfs } from 'node:fs/promises';
import {
  checkpointSpaceWarning,
  expectedSaves,
  formatGb,
} from '../../domain/checkpoints/checkpoint-space.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { checkpointPath } from '../../domain/spec/paths.js';
import { filesUnder } from './checkpoints.js';

/** Free bytes on the volume holding `dir` (for the disk-full message); undefined when unknown. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const s = await statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** After the run's first checkpoint: warn (worker log) when the rest will not fit, measured from it. */
export async function warnIfCheckpointsWillNotFit(
  spec: ExperimentSpec,
  checkpointDir: string,
  step: number,
): Promise<void> {
  let bytes = 0;
  for (const file of await filesUnder(checkpointPath(checkpointDir, step)).catch(() => []))
    bytes += (await stat(file).catch(() => ({ size: 0 }))).size;
  const free = await freeBytes(checkpointDir);
  const warning =
    bytes > 0 && free !== undefined
      ? checkpointSpaceWarning(expectedSaves(spec.trainer, step), bytes, free, checkpointDir)
      : undefined;
  if (warning) Context.current().log.warn(`checkpoint ${step} is ${formatGb(bytes)}: ${warning}`);
}
