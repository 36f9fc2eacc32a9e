/**
 * Names of permanent failures. Activities throw ApplicationFailure with one of these types; the
 * workflow lists them in `nonRetryableErrorTypes` so Temporal never retries what cannot succeed.
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
  /** A probe shipped with a job cannot be loaded on the image (a missing module, or its runtime_env failed): never resubmitted. */
  ProbeUnavailable: 'ProbeUnavailable',
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

/** Every permanent type, for retry policies. */
export const nonRetryableErrorTypes: string[] = Object.values(ErrorTypes);
