import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

// No nonRetryableErrorTypes here: whether a failure is retried is said where it is thrown
// (permanent() vs transient()), and the activity boundary marks it (src/activities/common/failures.ts).
const retry = (maximumAttempts: number) => ({
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts,
});

/** No maximumAttempts: retried until it succeeds (teardown and the reaper are never given up on). */
const untilDone = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' };

/** Named activity profiles: each states its timeouts and an explicit retry policy. */
export const profiles = {
  /** Short request/response calls and small file writes. */
  quick: { startToCloseTimeout: '5 minutes', retry: retry(5) },
  /**
   * Creating a cluster (local: starting its Ray nodes, tens of seconds): alive through a heartbeat
   * every 5 s, so a worker lost meanwhile is noticed in 30 s, not at the 10-minute timeout.
   */
  clusterStart: { startToCloseTimeout: '10 minutes', heartbeatTimeout: '30 seconds', retry: retry(5) },
  /** Heartbeat-polling calls bounded by a workflow timer: join, all-reduce, validation. */
  polling: { startToCloseTimeout: '6 hours', heartbeatTimeout: '30 seconds', retry: retry(10) },
  /** Reads and hashes every checkpoint file (many GB): alive through a heartbeat per file. */
  hashing: { startToCloseTimeout: '6 hours', heartbeatTimeout: '60 seconds', retry: retry(5) },
  /** Training: days long, alive through heartbeats; a retry resumes from heartbeat details. */
  longRunning: { startToCloseTimeout: '30 days', heartbeatTimeout: '60 seconds', retry: retry(20) },
  /** Teardown: retried until it succeeds (no maximumAttempts = unlimited), never given up on; heartbeats like clusterStart. */
  teardown: { startToCloseTimeout: '10 minutes', heartbeatTimeout: '30 seconds', retry: untilDone },
  /**
   * Waiting for room in a team's budget (policy queue): hours or days, alive through a heartbeat per
   * re-ask; the experiment's own deadlines bound it.
   */
  budgetQueue: { startToCloseTimeout: '30 days', heartbeatTimeout: '60 seconds', retry: retry(10) },
  /**
   * Settling a run's spend: short (one Update), retried until it succeeds like teardown (a spend
   * never goes uncounted); idempotent by key, so a retry after a lost reply counts nothing twice.
   */
  budgetSettle: { startToCloseTimeout: '30 seconds', retry: untilDone },
  /** The reaper's pass: retried until it succeeds, like teardown. */
  cleanup: { startToCloseTimeout: '10 minutes', retry: untilDone },
} as const satisfies Record<string, ActivityOptions>;
export type ProfileName = keyof typeof profiles;

/** Every activity and the one profile it runs under; the type refuses an activity left out. */
export const activityProfiles = {
  preflight: 'quick',
  verify: 'quick',
  submitCluster: 'clusterStart',
  archiveSweep: 'quick',
  archiveCampaign: 'quick',
  trackMlflowRun: 'quick',
  trackMlflowParent: 'quick',
  notify: 'quick',
  applyCheckpointRetention: 'quick',
  awaitAdmission: 'polling',
  awaitJoin: 'polling',
  proveSharedStorage: 'polling',
  allReduceCheck: 'polling',
  validate: 'polling',
  archive: 'hashing',
  latestCompleteCheckpoint: 'hashing',
  hashCheckpoints: 'hashing',
  train: 'longRunning',
  teardown: 'teardown',
  reapClusters: 'cleanup',
  reserveBudget: 'budgetQueue',
  settleBudget: 'budgetSettle',
} as const satisfies Record<keyof Activities, ProfileName>;

type ActivitiesUnder<P extends ProfileName> = {
  [K in keyof typeof activityProfiles]: (typeof activityProfiles)[K] extends P ? K : never;
}[keyof typeof activityProfiles];

/** The proxies of one profile: only the activities the table binds to it can be taken from it. */
function bind<P extends ProfileName>(profile: P) {
  return proxyActivities<Pick<Activities, ActivitiesUnder<P>>>(profiles[profile]);
}

// Bound once here (as temporalio/samples-typescript does); call sites never choose a profile.
export const {
  preflight,
  verify,
  archiveSweep,
  archiveCampaign,
  trackMlflowRun,
  trackMlflowParent,
  notify,
  applyCheckpointRetention,
} = bind('quick');
export const { awaitAdmission, awaitJoin, proveSharedStorage, allReduceCheck, validate } = bind('polling');
export const { archive, latestCompleteCheckpoint, hashCheckpoints } = bind('hashing');
export const { train } = bind('longRunning');
export const { submitCluster } = bind('clusterStart');
export const { teardown } = bind('teardown');
export const { reapClusters } = bind('cleanup');
export const { reserveBudget } = bind('budgetQueue');
export const { settleBudget } = bind('budgetSettle');
