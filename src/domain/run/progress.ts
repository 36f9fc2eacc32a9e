import { z } from 'zod';

/** Activities signal their workflow with progress, so the workflow's queries answer live. */
export const PROGRESS_SIGNAL = 'progress';

/** An experiment's query: does a pause (stopAtNextCheckpoint) wait for its next checkpoint? */
export const STOP_AT_CHECKPOINT_PENDING_QUERY = 'stopAtNextCheckpointPending';

export const ProgressSchema = z.strictObject({
  joinedWorkers: z.number().optional(),
  gpusRegistered: z.number().optional(),
  /** Why the join still waits (Pods the scheduler cannot place, link suspects avoided): the join deadline's failure repeats it. */
  waiting: z.string().optional(),
  /** A queued cluster's place in its Kueue LocalQueue (1: next); 0 once admitted. */
  queuePosition: z.number().optional(),
  step: z.number().optional(),
  lastCheckpointStep: z.number().optional(),
  /** One in-loop validation's `val-env/...` metrics (sent only when the workflow asked for them). */
  validation: z.strictObject({ step: z.number(), metrics: z.record(z.string(), z.number()) }).optional(),
});
export type Progress = z.infer<typeof ProgressSchema>;

export const JoinHeartbeatSchema = z.strictObject({ nodesAlive: z.number(), gpusRegistered: z.number() });
export type JoinHeartbeat = z.infer<typeof JoinHeartbeatSchema>;

export const TrainHeartbeatSchema = z.strictObject({
  step: z.number(),
  lastCheckpointStep: z.number(),
  submissionId: z.string(),
  /** ms since epoch of the last new step or checkpoint: the no-progress watchdog survives a retry. */
  lastProgressAt: z.number(),
  /** ms since epoch of the job's submission: deadlines.firstStepSeconds counts from here. */
  submittedAt: z.number().optional(),
});
export type TrainHeartbeat = z.infer<typeof TrainHeartbeatSchema>;
