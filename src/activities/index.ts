import { createAwaitAdmission } from './admission.js';
import { createAllReduceCheck } from './allreduce.js';
import { createArchive } from './archive.js';
import { createReserveBudget, createSettleBudget } from './budget.js';
import { createArchiveCampaign } from './campaign-archive.js';
import { createLatestCompleteCheckpoint } from './campaign-checkpoints.js';
import { createApplyCheckpointRetention } from './checkpoint-retention.js';
import type { ActivityDeps } from './deps.js';
import { mapFailuresAtBoundary } from './failures.js';
import { createHashCheckpoints } from './hash-checkpoints.js';
import { createAwaitJoin } from './join.js';
import { createPreflight } from './preflight.js';
import { createReapClusters } from './reap.js';
import { createProveSharedStorage } from './shared-storage.js';
import { createSubmitCluster } from './submit.js';
import { createArchiveSweep } from './sweep-archive.js';
import { createNotify } from './notify.js';
import { createTeardown } from './teardown.js';
import { createTrackMlflowParent, createTrackMlflowRun } from './track-mlflow.js';
import { createTrain } from './train.js';
import { createValidate } from './validate.js';
import { createVerify } from './verify.js';

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
export type { ActivityDeps } from './deps.js';
