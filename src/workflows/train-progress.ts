import type { ExperimentRun } from './experiment-run.js';

/**
 * The train activity signals checkpoints sparsely (src/activities/train/progress-cadence.ts), so its
 * result brings the status query and the checkpoint search attribute up to the last step.
 */
export function progressFromTrainResult(
  run: ExperimentRun,
  result: { finalStep: number; lastCheckpointStep: number },
): void {
  const { status } = run;
  status.lastStep = Math.max(status.lastStep, result.finalStep);
  const newCheckpoint = result.lastCheckpointStep > status.lastCheckpointStep;
  status.lastCheckpointStep = Math.max(status.lastCheckpointStep, result.lastCheckpointStep);
  run.visible?.progressed(newCheckpoint);
}
