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
  /** The trainer crashed (non-zero exit not otherwise named): another attempt may get further. */
  TrainingFailed: 'TrainingFailed',
  /** The trainer refused its configuration (exit 2, or Hydra/RAGEN config errors): no attempt can fix it. */
  TrainingConfigInvalid: 'TrainingConfigInvalid',
  /** The trainer found too few GPUs or could not place its workers (exit 3): a fresh cluster may fix it. */
  TrainingResourceShortfall: 'TrainingResourceShortfall',
  /** The checkpoint to resume from, or one about to be written, is unusable (exit 4). */
  CheckpointUnusable: 'CheckpointUnusable',
  /** The checkpoint volume ran out of space (ENOSPC); the message names the free space left. */
  CheckpointDiskFull: 'CheckpointDiskFull',
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
