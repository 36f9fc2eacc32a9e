import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { nonRetryableErrorTypes } from '../spec/error-types.js';

/** Named activity profiles: each states its timeouts and an explicit retry policy. */
const retry = (maximumAttempts: number) => ({
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts,
  nonRetryableErrorTypes,
});

/** Short request/response calls: preflight, verify, submit, archive. */
export const quickProfile: ActivityOptions = { startToCloseTimeout: '5 minutes', retry: retry(5) };

/** Heartbeat-polling calls bounded by a workflow timer: join, all-reduce, validation. */
export const pollingProfile: ActivityOptions = { startToCloseTimeout: '6 hours', heartbeatTimeout: '30 seconds', retry: retry(10) };

/** Training: days long, alive through heartbeats; a retry resumes from heartbeat details. */
export const longRunningProfile: ActivityOptions = { startToCloseTimeout: '30 days', heartbeatTimeout: '60 seconds', retry: retry(20) };

/** Checkpoint hashing: tens of GB per checkpoint; heartbeats per file, a retry resumes from its details. */
export const hashingProfile: ActivityOptions = { startToCloseTimeout: '24 hours', heartbeatTimeout: '2 minutes', retry: retry(10) };

/** Teardown: retried until it succeeds (no maximumAttempts = unlimited), never given up on. */
export const cleanupProfile: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

export const quick = proxyActivities<Activities>(quickProfile);
export const polling = proxyActivities<Activities>(pollingProfile);
export const longRunning = proxyActivities<Activities>(longRunningProfile);
export const cleanup = proxyActivities<Activities>(cleanupProfile);
export const hashing = proxyActivities<Activities>(hashingProfile);

/** Workflows started before hashing became its own activity replay without it. */
export const HASH_CHECKPOINTS_PATCH = 'hash-checkpoints-activity';
