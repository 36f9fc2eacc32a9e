import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { worldSizeMismatch } from '../../domain/checkpoints/checkpoint-world-size.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { filesUnder } from '../checkpoints/checkpoints.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import type { TrainInput, TrainResult } from './train-io.js';
import { TrainSession } from './train-session.js';

export type { TrainInput, TrainResult };

/** A checkpoint saved by another world size cannot be loaded by verl: refused before any job runs. */
async function refuseOtherWorldSize(checkpoint: string, spec: ExperimentSpec): Promise<void> {
  const files = await filesUnder(checkpoint).catch(() => []);
  const why = worldSizeMismatch(checkpoint, files, spec.trainer);
  if (why) throw permanent(ErrorTypes.CheckpointUnusable, why);
}

/**
 * Stage 5. Run the trainer as a Ray job and poll it: progress from its console lines (verl's
 * `console` logger, always on), checkpoint existence from the tracker file, workers from the
 * dashboard. Heartbeat: {step, lastCheckpointStep, submissionId, lastProgressAt, submittedAt}; a
 * retry (new worker) finds the same job by its submission id and keeps the watchdog's clocks.
 * Watchdog: deadlines.firstStepSeconds until the first training step (model download, worker
 * setup, initial validation), then deadlines.noProgressSeconds between steps. Returns on all steps
 * done, or on RAGEN's early stop (`earlyStopped`, with the reasons). Fails permanently on a failed
 * job, typed by its exit code and log (src/domain/failures/job-exit.ts), a lost worker node (ClusterLost) or
 * the watchdog (NoProgress). The rules are src/domain/train/train-poll.ts (pure, table-tested); this
 * activity gathers each poll's observations and acts on the verdict.
 */
export function createTrain(deps: ActivityDeps) {
  return async function train(input: TrainInput): Promise<TrainResult> {
    if (input.resume.mode === 'resume_path') await refuseOtherWorldSize(input.resume.path, input.spec);
    const session = await TrainSession.open(deps, input);
    return session.submitAndFollow();
  };
}
