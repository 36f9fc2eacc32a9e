import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SweepLimits } from '../domain/sweep/sweep-limits.js';
import type { SweepStatus } from '../domain/sweep/sweep.js';

/**
 * Every signal, query and Update the sweep workflow answers, shared with the CLI and the experiment
 * (which sends `intermediateResult` to its sweep). The sweep sends its children the experiment's
 * `stopEarly` (src/workflows/definitions.ts).
 */

/** `status` is answered by every workflow kind; for a sweep its `kind` is 'sweep'. */
export { statusQuery } from './shared-definitions.js';

/** The sweep workflow's progress query (running, done, failed, best so far), shared with the CLI. */
export const sweepStatusQuery = defineQuery<SweepStatus>('sweepStatus');

/**
 * Raise or lower a running sweep's concurrency and failure budget. A validator refuses bad values
 * before anything changes; the answer is the sweep's status after the change. Lowering the
 * concurrency starts no new child until fewer than the new bound run (running ones finish).
 */
export const setSweepLimitsUpdate = defineUpdate<SweepStatus, [SweepLimits]>('setLimits');

/** A child's in-loop validation, forwarded to its sweep (one signal per validation). */
export interface IntermediateResult {
  workflowId: string;
  step: number;
  metrics: Record<string, number>;
}
export const intermediateResultSignal = defineSignal<[IntermediateResult]>('intermediateResult');
