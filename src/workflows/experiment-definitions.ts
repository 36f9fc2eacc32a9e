import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { Pruning } from '../domain/run/experiment-input.js';
import { STOP_AT_CHECKPOINT_PENDING_QUERY } from '../domain/run/progress.js';

/**
 * Signals and queries of the experiment workflow, shared with the client. It also answers `status`
 * and handles `progress` (shared-definitions.ts).
 */
export const stageQuery = defineQuery<string>('stage');
export const lastStepQuery = defineQuery<number>('lastStep');
/** Asked by the train activity on a checkpoint it would not signal: does a pause wait for one? */
export const stopAtCheckpointPendingQuery = defineQuery<boolean>(STOP_AT_CHECKPOINT_PENDING_QUERY);

/** Sent by a campaign's pause: finish training after the next checkpoint, tear down, end as `paused`. */
export const stopAtNextCheckpointSignal = defineSignal('stopAtNextCheckpoint');

/**
 * Sent by a sweep's scheduler: stop training now (checkpoints kept), skip validation, end `pruned`.
 * The wire name stays `stopEarly`: recorded histories and running sweeps send it by that name.
 */
export const pruneSignal = defineSignal<[Pruning]>('stopEarly');
