import { defineQuery, defineSignal } from '@temporalio/workflow';
import { PROGRESS_SIGNAL, type Progress } from '../domain/run/progress.js';
import type { WorkflowStatus } from '../domain/run/workflow-status.js';

/** The one `status` query: experiments, campaigns and sweeps all answer it (see WorkflowStatus). */
export const statusQuery = defineQuery<WorkflowStatus>('status');

/**
 * Training progress, sent by the train activity to its experiment and forwarded by the experiment
 * to its parent campaign: both handle it.
 */
export const progressSignal = defineSignal<[Progress]>(PROGRESS_SIGNAL);
