import { defineQuery } from '@temporalio/workflow';
import type { SweepStatus } from '../domain/sweep.js';

/** The sweep workflow's progress query (running, done, failed, best so far), shared with the CLI. */
export const sweepStatusQuery = defineQuery<SweepStatus>('sweepStatus');
