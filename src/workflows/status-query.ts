import { defineQuery } from '@temporalio/workflow';
import type { WorkflowStatus } from '../domain/workflow-status.js';

/** The one `status` query: experiments, campaigns and sweeps all answer it (see WorkflowStatus). */
export const statusQuery = defineQuery<WorkflowStatus>('status');
