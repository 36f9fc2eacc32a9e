/**
 * `patched()` ids of workflow changes since 1.0 (all five first released in 1.1.0). Each has, in
 * test/workflows/histories/<release>/, a history that reaches its call without the marker (the
 * replay test runs the old branch on it) and one with it (test/unit/patch-coverage.test.ts).
 * CONTRIBUTING.md's patch table gives the release that deprecates each and the one that removes it.
 */

/**
 * KubeRay: the shared-storage proof runs alongside the environment probe and the all-reduce check
 * (its Ray tasks take no GPU), instead of before them. Recorded before: experiment-kuberay-succeeded.
 */
export const STORAGE_PROOF_ALONGSIDE_CHECKS = 'storage-proof-alongside-checks';

/**
 * A cluster in a Kueue queue waits for admission in a stage of its own, `queued` (the status shows
 * its place in the LocalQueue), instead of inside `join`. Recorded before: experiment-kuberay-queued.
 */
export const KUEUE_QUEUED_STAGE = 'kueue-queued-stage';

/**
 * A campaign's attempt that ended with ClusterPreempted (Kueue took its quota back) is recorded
 * with outcome `preempted`, not `failed`: it uses up no attempt and counts nothing towards
 * maxAttemptsWithoutNewCheckpoint; the next attempt queues and resumes from the latest checkpoint.
 * Recorded before: campaign-preempted.
 */
export const CAMPAIGN_PREEMPTION = 'campaign-preemption';

/**
 * Checkpoint hashing starts with teardown when no trainer can still be writing (its job ended by
 * itself, or none ran), instead of after it. Recorded before: experiment-succeeded.
 */
export const HASHING_DURING_TEARDOWN = 'hashing-during-teardown';

/**
 * Team budgets: the run reserves its GPU-hour estimate after preflight (a queued run waits, a
 * refused one creates nothing) and settles the measured allocation after teardown. The run deadline
 * counts from the grant. Only a run whose team has a budget takes it: the worker decides as the run
 * starts (src/worker/budget-patch-activation.ts), so a run without one records no marker and takes the
 * 1.0.0 path. Without it: every experiment history but one; with it: experiment-budget-granted (and
 * the teamBudget workflow itself: budget-vision).
 */
export const TEAM_BUDGET = 'team-budget';
