import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { StoppedEarly } from '../domain/experiment-input.js';
import { PROGRESS_SIGNAL, type Progress, STOP_AT_CHECKPOINT_PENDING_QUERY } from '../domain/progress.js';

/** Signals and queries of the experiment workflow, shared with the client. */
export const progressSignal = defineSignal<[Progress]>(PROGRESS_SIGNAL);
/** `status` is answered by every workflow kind; for an experiment its `kind` is 'experiment'. */
export { statusQuery } from './status-query.js';
export const stageQuery = defineQuery<string>('stage');
export const lastStepQuery = defineQuery<number>('lastStep');
/** Asked by the train activity on a checkpoint it would not signal: does a pause wait for one? */
export const stopAtCheckpointPendingQuery = defineQuery<boolean>(STOP_AT_CHECKPOINT_PENDING_QUERY);

/** Sent by a campaign's pause: finish training after the next checkpoint, tear down, end as `paused`. */
export const stopAtNextCheckpointSignal = defineSignal('stopAtNextCheckpoint');

/** Sent by a sweep's scheduler: stop training now (checkpoints kept), skip validation, end `stoppedEarly`. */
export const stopEarlySignal = defineSignal<[StoppedEarly]>('stopEarly');
