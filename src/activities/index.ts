import { createAwaitAdmission } from './cluster/admission.js';
import { createAllReduceCheck } from './join/allreduce.js';
import { createArchive } from './archive/archive.js';
import { createReserveBudget, createSettleBudget } from './budget/budget.js';
import { createArchiveCampaign } from './campaign/campaign-archive.js';
import { createLatestCompleteCheckpoint } from './campaign/campaign-checkpoints.js';
import { createApplyCheckpointRetention } from './checkpoints/checkpoint-retention.js';
import type { ActivityDeps } from './common/deps.js';
import { mapFailuresAtBoundary } from './common/failures.js';
import { createHashCheckpoints } from './checkpoints/hash-checkpoints.js';
import { createAwaitJoin } from './join/join.js';
import { createPreflight } from './preflight/preflight.js';
import { createReapClusters } from './cluster/reap.js';
import { createProveSharedStorage } from './join/shared-storage.js';
import { createSubmitCluster } from './cluster/submit.js';
import { createArchiveSweep } from './sweep/sweep-archive.js';
import { createNotify } from './tracking/notify.js';
import { createTeardown } from './cluster/teardown.js';
import { createTrackMlflowParent, createTrackMlflowRun } from './tracking/track-mlflow.js';
import { createTrain } from './train/train.js';
import { createValidate } from './validate/validate.js';
import { createVerify } from './verify/verify.js';

/**
 * All activities of the experiment pipeline, built from their dependencies (no module singletons).
 * Each is wrapped once by the failure boundary: domain errors leave as Temporal failures.
 */
export function createActivities(deps: ActivityDeps) {
  return mapFailuresAtBoundary({
    preflight: createPreflight(deps),
    verify: createVerify(deps),
    submitCluster: createSubmitCluster(deps),
    awaitAdmission: createAwaitAdmission(deps),
    awaitJoin: createAwaitJoin(deps),
    proveSharedStorage: createProveSharedStorage(deps),
    allReduceCheck: createAllReduceCheck(deps),
    train: createTrain(deps),
    validate: createValidate(deps),
    hashCheckpoints: createHashCheckpoints(),
    archive: createArchive(),
    teardown: createTeardown(deps),
    reapClusters: createReapClusters(deps),
    archiveSweep: createArchiveSweep(),
    latestCompleteCheckpoint: createLatestCompleteCheckpoint(),
    archiveCampaign: createArchiveCampaign(),
    trackMlflowRun: createTrackMlflowRun(),
    trackMlflowParent: createTrackMlflowParent(),
    notify: createNotify(),
    applyCheckpointRetention: createApplyCheckpointRetention(),
    reserveBudget: createReserveBudget(deps),
    settleBudget: createSettleBudget(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
export type { ActivityDeps } from './common/deps.js';
