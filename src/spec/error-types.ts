/**
 * Names of permanent failures: thrown as `permanent(type, …)` domain errors, which the activity
 * boundary marks non-retryable (the one place that says so), so Temporal never retries them.
 */
export const ErrorTypes = {
  InvalidSpec: 'InvalidSpec',
  PreflightFailed: 'PreflightFailed',
  StorageNotWritable: 'StorageNotWritable',
  RayVersionMismatch: 'RayVersionMismatch',
  ImageNotVerified: 'ImageNotVerified',
  ImageNotFound: 'ImageNotFound',
  ImageDigestMismatch: 'ImageDigestMismatch',
  RegistryUnauthorized: 'RegistryUnauthorized',
  JoinDeadlineExceeded: 'JoinDeadlineExceeded',
  AllReduceFailed: 'AllReduceFailed',
  TrainingFailed: 'TrainingFailed',
  TrainingIncomplete: 'TrainingIncomplete',
  NoProgress: 'NoProgress',
  ClusterLost: 'ClusterLost',
  ValidationFailed: 'ValidationFailed',
  ManifestExists: 'ManifestExists',
  RunDeadlineExceeded: 'RunDeadlineExceeded',
  SweepFailureBudgetExhausted: 'SweepFailureBudgetExhausted',
  /** A campaign used up campaign.maxAttempts. */
  CampaignAttemptsExhausted: 'CampaignAttemptsExhausted',
  /** campaign.maxAttemptsWithoutNewCheckpoint attempts in a row ended without a new complete checkpoint. */
  CampaignStalled: 'CampaignStalled',
  /** Kubernetes 401/403: the message names the verb and resource to grant. */
  KubePermissionDenied: 'KubePermissionDenied',
  /** Kubernetes 422 (or another 4xx): the message names the field. */
  KubeInvalidObject: 'KubeInvalidObject',
  /** A RayCluster with our name exists but belongs to another workflow or attempt. */
  ClusterNameTaken: 'ClusterNameTaken',
} as const;

export type ErrorType = (typeof ErrorTypes)[keyof typeof ErrorTypes];

/** Names of transient failures: thrown as `transient(type, …)`, retried by the activity's policy. */
export const TransientErrorTypes = {
  /** A registry answered 5xx/429/408, or could not be reached. */
  RegistryUnavailable: 'RegistryUnavailable',
  /** The Kubernetes API answered 429/5xx, or could not be reached. */
  KubeApiUnavailable: 'KubeApiUnavailable',
  /** A cluster's processes or head did not come up (a retried create rebuilds it). */
  ClusterStartFailed: 'ClusterStartFailed',
  /** Something of a deleted cluster is still there (a retried teardown waits again). */
  TeardownIncomplete: 'TeardownIncomplete',
} as const;

export type TransientErrorType = (typeof TransientErrorTypes)[keyof typeof TransientErrorTypes];
