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
  /** Too few nodes are left once the node ledger's link suspects are excluded: names them, their expiry and `ragen-orchestrator nodes clear`. */
  TooFewHealthyNodes: 'TooFewHealthyNodes',
  /** A probe shipped with a job cannot be loaded on the image (a missing module, or its runtime_env failed): never resubmitted. */
  ProbeUnavailable: 'ProbeUnavailable',
  /** The environment probe found the image or storage missing what the trainer needs: every failed item, its node, what was found and the fix. Never resubmitted. */
  ImageContractUnmet: 'ImageContractUnmet',
  /** The trainer crashed (non-zero exit not otherwise named): another attempt may get further. */
  TrainingFailed: 'TrainingFailed',
  /** The trainer refused its configuration (exit 2, or Hydra/RAGEN config errors): no attempt can fix it. */
  TrainingConfigInvalid: 'TrainingConfigInvalid',
  /** The entrypoint's script is not in the image's working directory (python exit 2, "can't open file"): names the file and the folder. */
  EntrypointNotFound: 'EntrypointNotFound',
  /** The trainer found too few GPUs or could not place its workers (exit 3): a fresh cluster may fix it. */
  TrainingResourceShortfall: 'TrainingResourceShortfall',
  /** The checkpoint to resume from, or one about to be written, is unusable (exit 4). */
  CheckpointUnusable: 'CheckpointUnusable',
  /** The checkpoint volume ran out of space (ENOSPC); the message names the free space left. */
  CheckpointDiskFull: 'CheckpointDiskFull',
  /** The archive volume (storage.archiveDir: log copy, metrics, manifests) ran out of space (ENOSPC). */
  ArchiveDiskFull: 'ArchiveDiskFull',
  TrainingIncomplete: 'TrainingIncomplete',
  NoProgress: 'NoProgress',
  ClusterLost: 'ClusterLost',
  ValidationFailed: 'ValidationFailed',
  ManifestExists: 'ManifestExists',
  /** storage.objectStore cannot be used (unreachable, no bucket, credentials refused, quota full): the message names the setting and the fix. */
  ObjectStoreUnusable: 'ObjectStoreUnusable',
  /** A file differs from the ledger's sha256, or the store's checksum from the bytes sent or fetched. */
  ObjectStoreChecksumMismatch: 'ObjectStoreChecksumMismatch',
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
  /** The kubelet cannot pull the image (ErrImagePull, ImagePullBackOff, InvalidImageName): names the image. */
  ImagePullFailed: 'ImagePullFailed',
  /** A Ray container keeps exiting (CrashLoopBackOff): names the pod, container and last exit code. */
  PodCrashLooping: 'PodCrashLooping',
  /** The kubelet cannot build a container (CreateContainerConfigError: a Secret or key that is missing). */
  PodConfigInvalid: 'PodConfigInvalid',
  /** KubeRay's ReplicaFailure condition (it could not create or delete pods); its reason is kept. */
  ReplicaFailure: 'ReplicaFailure',
  /**
   * Kueue took a training cluster's quota back (preemption: it suspended the RayCluster, the
   * operator deleted its Pods). Not the run's fault: a campaign records it as a preemption and
   * resumes from the latest checkpoint once a new cluster is admitted.
   */
  ClusterPreempted: 'ClusterPreempted',
  /** A queued (suspended) RayCluster was not admitted within kuberay.admissionSeconds. */
  AdmissionDeadlineExceeded: 'AdmissionDeadlineExceeded',
  /** The orchestrator's worker and the Ray pods do not see the same files under the storage mount. */
  StorageNotShared: 'StorageNotShared',
  /** The experiment tracker refused a request (4xx other than 408/429): bad credentials or input. */
  TrackerRejected: 'TrackerRejected',
  /** A notification receiver refused the event (4xx other than 408/429). */
  NotificationRejected: 'NotificationRejected',
  /** A state file (local cluster state, campaign ledger) is corrupt or not this product's: reported, left as it is, never followed. */
  StateFileInvalid: 'StateFileInvalid',
  /** The Ray dashboard refused a request (4xx other than 408/429: a bad token, a bad request). */
  RayDashboardRejected: 'RayDashboardRejected',
  /** A Ray job with our submission id exists but runs another entrypoint: never a second driver. */
  RayJobConflict: 'RayJobConflict',
  /** The Ray dashboard answered something that is not what its API returns (invalid JSON). */
  RayDashboardMalformed: 'RayDashboardMalformed',
  /** The team's budget (budgets.yaml, policy refuse) has no room for the run's reservation: names the budget, the spend and the reservation. */
  BudgetRefused: 'BudgetRefused',
  /** budgets.yaml on the worker does not parse: names the field and the fix. */
  BudgetsFileInvalid: 'BudgetsFileInvalid',
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
  /** The experiment tracker answered 5xx/429/408 or could not be reached. */
  TrackerUnavailable: 'TrackerUnavailable',
  /** A notification receiver answered 5xx/429/408 or could not be reached. */
  NotificationUndelivered: 'NotificationUndelivered',
  /** The model hub (HF_ENDPOINT) could not be reached while staging a model. */
  ModelHubUnavailable: 'ModelHubUnavailable',
  /** The Ray dashboard did not answer, or answered 5xx/408/429, for longer than the in-place retries allow. */
  RayDashboardUnavailable: 'RayDashboardUnavailable',
} as const;

export type TransientErrorType = (typeof TransientErrorTypes)[keyof typeof TransientErrorTypes];
