/**
 * The failure catalogue: every error type once, with what each part of the product does with it.
 * The names (error-types.ts), the experiment's resubmit, the campaign's counting and the docs'
 * failure table (docs/reference.md, `npm run docs:failures`) are all read from here; a new error
 * type is an entry here and the code that raises it. Pure: workflows import it.
 */

/**
 * Whether the activity's retry policy tries again: `permanent` is thrown with `permanent()` and
 * never retried, `transient` with `transient()` and retried; `either` is decided where it is thrown.
 */
export type Retry = 'permanent' | 'transient' | 'either';

/**
 * How a campaign takes an attempt that failed with it: `attempt` starts another one (the failed one
 * counts toward campaign.maxAttempts, and toward maxAttemptsWithoutNewCheckpoint when it left no
 * new checkpoint); `fatal` ends the campaign (no attempt can fix it); `preempted` starts another
 * once a cluster is admitted again and counts toward neither; `none`: the ending of a campaign or
 * sweep itself, never an attempt's.
 */
export type CampaignCount = 'attempt' | 'fatal' | 'preempted' | 'none';

export interface FailureEntry {
  retry: Retry;
  /** Raised while the cluster joins (workers, all-reduce): a fresh cluster is submitted, up to join.maxResubmits. */
  resubmit: boolean;
  campaign: CampaignCount;
  /** What happened, as the user reads it (the message adds the particulars). */
  means: string;
  /** What the user does about it. */
  fix: string;
}

export const FAILURE_CATALOGUE = {
  InvalidSpec: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means:
      'The spec cannot run as written: a field is invalid, the `code` tree is too big or gone, or the backend is not configured on this worker.',
    fix: 'Correct the field the message names and start again; for a backend, start the worker with it.',
  },
  PreflightFailed: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'A preflight check failed before anything was created; the message lists each failed check.',
    fix: 'Fix what each failed check names, then start again.',
  },
  StorageNotWritable: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'A storage folder cannot be written by the worker or by the Ray pods.',
    fix: "Give the folder the message names the owner, group or mode it states, or point the spec's storage elsewhere.",
  },
  RayVersionMismatch: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: "The image's or the backend's Ray version is not the spec's `rayVersion`.",
    fix: 'Set `rayVersion` to the version the message names, or use an image with the declared Ray.',
  },
  ImageNotVerified: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means:
      'The registry could not confirm the image: no linux/amd64 manifest, no config, or another refusal.',
    fix: 'Push a linux/amd64 image and reference it by its digest.',
  },
  ImageNotFound: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The registry has no manifest for the image digest.',
    fix: 'Push the image, or correct the repository or the digest.',
  },
  ImageDigestMismatch: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The registry returned content that does not hash to the digest asked for.',
    fix: 'Do not run it: check the registry or the proxy in front of it.',
  },
  RegistryUnauthorized: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The registry refused the credentials tried (401/403), or its token endpoint gave no token.',
    fix: "Add credentials for the registry to the worker's Docker config (`docker login`).",
  },
  JoinDeadlineExceeded: {
    retry: 'permanent',
    resubmit: true,
    campaign: 'attempt',
    means: 'The workers did not join within deadlines.joinSeconds; the message says who waits and why.',
    fix: 'Free the capacity the scheduler names, or raise deadlines.joinSeconds.',
  },
  AllReduceFailed: {
    retry: 'permanent',
    resubmit: true,
    campaign: 'attempt',
    means: "The all-reduce check across the cluster's GPUs failed, or a node's links are too slow.",
    fix: 'Check the nodes and links the message names; a fresh cluster is tried.',
  },
  TooFewHealthyNodes: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: "Too few nodes are left once the node ledger's link suspects are excluded.",
    fix: 'Repair the suspect nodes, then `ragen-orchestrator nodes clear`; or wait for them to expire.',
  },
  ProbeUnavailable: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means:
      'A probe shipped with a job cannot be loaded on the image (a missing module, a failed runtime_env).',
    fix: "Install what the message names (ray, numpy) in the image's python.",
  },
  ImageContractUnmet: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The environment probe found the image or the storage missing what the trainer needs.',
    fix: 'Do the fix each finding names (its item, node and what was found), then start again.',
  },
  TrainingFailed: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The trainer crashed or was stopped (an exit not otherwise named).',
    fix: 'Read the log tail in the message; another attempt may get further.',
  },
  TrainingConfigInvalid: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The trainer refused its configuration (exit 2, or a Hydra or RAGEN config error).',
    fix: 'Correct the override or config key the quoted log line names.',
  },
  EntrypointNotFound: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: "The entrypoint's script is not in the image's working directory.",
    fix: 'Correct the entrypoint, or set `kuberay.head.workingDir` to the folder that holds it.',
  },
  TrainingResourceShortfall: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The trainer found too few GPUs or could not place its workers (exit 3).',
    fix: "Match trainer.nnodes and nGpusPerNode to the cluster's shape; a fresh cluster may have them.",
  },
  CheckpointUnusable: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means:
      'The checkpoint to resume from, or one about to be written, is unusable (exit 4, or shards of another world size).',
    fix: 'Resume from another checkpoint, or keep the world size the checkpoint names.',
  },
  CheckpointDiskFull: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The checkpoint volume ran out of space; the message names the free space left.',
    fix: 'Free space on the checkpoint volume (storage.retain keeps fewer), then start again.',
  },
  ArchiveDiskFull: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The archive volume (storage.archiveDir: the log copy, metrics, manifests) ran out of space.',
    fix: 'Free space there or move storage.archiveDir, then start again; the checkpoints are kept.',
  },
  TrainingIncomplete: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The trainer exited 0 short of total_training_steps, without an early stop.',
    fix: "Read the trainer's log: it stopped early without saying why.",
  },
  NoProgress: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      'No training step within deadlines.firstStepSeconds of the submission, or no new step or checkpoint for deadlines.noProgressSeconds; the job was stopped.',
    fix: 'Read the log tail for a hang; raise the deadline the message names if steps are that slow.',
  },
  ClusterLost: {
    retry: 'permanent',
    resubmit: true,
    campaign: 'attempt',
    means: 'The cluster, its head or the job on it disappeared (deleted, replaced, failed).',
    fix: 'At join a fresh cluster is tried, in a campaign the next attempt resumes; check the nodes if it repeats.',
  },
  ValidationFailed: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      'The validation job failed, printed no result, validated another step, or its results are invalid.',
    fix: "Read the log tail; with the trainer's validation, set validation.envTag to the tag it validates.",
  },
  ManifestExists: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means:
      'A different manifest already exists where this run writes its own; it is kept, never overwritten.',
    fix: 'Move the existing manifest aside, or run under a new name or workflow id.',
  },
  ObjectStoreUnusable: {
    retry: 'either',
    resubmit: false,
    campaign: 'attempt',
    means:
      'storage.objectStore cannot be used (unreachable, no bucket, credentials refused, quota full); an endpoint unreachable after preflight is retried.',
    fix: 'Correct the storage.objectStore setting the message names, or start the S3 server.',
  },
  ObjectStoreChecksumMismatch: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: "A file differs from the ledger's sha256, or the store's checksum from the bytes sent or fetched.",
    fix: 'Check the file and the store; the file is neither uploaded nor resumed from.',
  },
  RunDeadlineExceeded: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The run took longer than deadlines.runSeconds; what it wrote is archived.',
    fix: 'Raise deadlines.runSeconds, or train fewer steps per run.',
  },
  SweepFailureBudgetExhausted: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'none',
    means: "A sweep's children failed more often than its failure budget allows.",
    fix: "Read the failed children's errors; raise the budget with `sweep set --failure-budget`.",
  },
  CampaignAttemptsExhausted: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'none',
    means: 'A campaign used up campaign.maxAttempts.',
    fix: "Read the last attempt's error; raise campaign.maxAttempts.",
  },
  CampaignStalled: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'none',
    means:
      'campaign.maxAttemptsWithoutNewCheckpoint attempts in a row ended without a new complete checkpoint.',
    fix: "Read the attempts' errors: training fails before its next checkpoint.",
  },
  KubePermissionDenied: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: "The Kubernetes API refused the worker's credentials (401) or an action (403).",
    fix: 'Grant the verb and resource the message names with a Role and RoleBinding, or fix the kubeconfig.',
  },
  KubeInvalidObject: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The Kubernetes API rejected an object (422 or another 4xx); the message names the field.',
    fix: 'Correct the spec field behind the named field (kuberay section).',
  },
  ClusterNameTaken: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: "A RayCluster or Secret with this run's name belongs to another workflow or attempt.",
    fix: 'Delete that object, or rename the experiment.',
  },
  ImagePullFailed: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The kubelet cannot pull the image (ErrImagePull, ImagePullBackOff, InvalidImageName).',
    fix: 'Correct the image, or give the pods pull access to its registry.',
  },
  PodCrashLooping: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      'A Ray container keeps exiting (CrashLoopBackOff); the message names the pod, container and exit code.',
    fix: "Read that container's log; check the image's entrypoint and resources.",
  },
  PodConfigInvalid: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The kubelet cannot build a container (CreateContainerConfigError): a Secret or key is missing.',
    fix: 'Create the Secret or key the message names.',
  },
  ReplicaFailure: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      "KubeRay could not create or delete the cluster's pods (its ReplicaFailure condition, reason kept).",
    fix: "Read the reason: often a quota or an admission webhook's refusal.",
  },
  ClusterPreempted: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'preempted',
    means: "Kueue took the training cluster's quota back (preemption). Not the run's fault.",
    fix: 'None: a campaign resumes from the latest checkpoint once a cluster is admitted again.',
  },
  AdmissionDeadlineExceeded: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'A queued RayCluster was not admitted by Kueue within kuberay.admissionSeconds.',
    fix: "Raise kuberay.admissionSeconds, or free quota in the queue's cluster queue.",
  },
  StorageNotShared: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'fatal',
    means: 'The worker and the Ray pods do not see the same files under the storage mount.',
    fix: 'Mount the same ReadWriteMany volume at the same path on the worker and on every Ray pod.',
  },
  TrackerRejected: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The experiment tracker refused a request (4xx other than 408/429), or its experiment is deleted.',
    fix: "Set the tracker's credentials in the worker's environment, or restore or rename the experiment.",
  },
  NotificationRejected: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'A notification receiver refused the event (4xx other than 408/429).',
    fix: 'Check notify[].url and what the receiver expects.',
  },
  StateFileInvalid: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      "A state file (local cluster state, campaign ledger) is corrupt or not this product's; it is left as it is.",
    fix: 'Restore the file, or move it aside as the message says.',
  },
  RayDashboardRejected: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The Ray dashboard refused a request (4xx other than 408/429: a bad token, a bad request).',
    fix: "Check the cluster's Ray auth token and the request the message quotes.",
  },
  RayJobConflict: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'A Ray job with our submission id exists but runs another entrypoint: never a second driver.',
    fix: 'Stop or delete that job, or run under a new workflow id.',
  },
  RayDashboardMalformed: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'The Ray dashboard answered something its API does not return (invalid JSON).',
    fix: 'Check what answers at the dashboard address (a proxy, another service).',
  },
  BudgetRefused: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means:
      "The team's budget (policy refuse) has no room for the run's reservation; names the budget and spend.",
    fix: 'Raise the budget in budgets.yaml, wait for its next period, or use policy queue to wait for room.',
  },
  BudgetsFileInvalid: {
    retry: 'permanent',
    resubmit: false,
    campaign: 'attempt',
    means: 'budgets.yaml on the worker does not parse; the message names the field.',
    fix: 'Correct the named field of budgets.yaml.',
  },
  RegistryUnavailable: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'A registry answered 5xx, 429 or 408, or could not be reached.',
    fix: 'Retried; if it persists, check the registry.',
  },
  KubeApiUnavailable: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'The Kubernetes API answered 429 or 5xx, or could not be reached.',
    fix: 'Retried; if it persists, check the API server.',
  },
  ClusterStartFailed: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: "A cluster's processes or head did not come up.",
    fix: 'Retried (a retried create rebuilds it); if it persists, read the head log.',
  },
  TeardownIncomplete: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'Something of a deleted cluster is still there.',
    fix: 'Retried until it is gone.',
  },
  TrackerUnavailable: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'The experiment tracker answered 5xx, 429 or 408, or could not be reached.',
    fix: 'Retried; if it persists, check the tracker.',
  },
  NotificationUndelivered: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'A notification receiver answered 5xx, 429 or 408, or could not be reached.',
    fix: 'Retried; if it persists, check the receiver.',
  },
  ModelHubUnavailable: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means: 'The model hub (HF_ENDPOINT) could not be reached while staging a model.',
    fix: 'Retried; if it persists, check HF_ENDPOINT and the network.',
  },
  RayDashboardUnavailable: {
    retry: 'transient',
    resubmit: false,
    campaign: 'attempt',
    means:
      'The Ray dashboard did not answer, or answered 5xx, 408 or 429, for longer than the in-place retries allow.',
    fix: "Retried; if it persists, check the cluster's head.",
  },
} as const satisfies Record<string, FailureEntry>;

export type FailureName = keyof typeof FAILURE_CATALOGUE;

/** The entry of a failure type, or undefined for a type the catalogue does not name (a plain error). */
export function failureEntry(type: string | undefined): FailureEntry | undefined {
  return type !== undefined && Object.hasOwn(FAILURE_CATALOGUE, type)
    ? FAILURE_CATALOGUE[type as FailureName]
    : undefined;
}

/** The experiment resubmits a fresh cluster for a join that failed with this type. */
export function resubmitsCluster(type: string | undefined): boolean {
  return failureEntry(type)?.resubmit === true;
}

/** No attempt of a campaign can fix it: the campaign ends at once. */
export function endsCampaign(type: string | undefined): boolean {
  return failureEntry(type)?.campaign === 'fatal';
}

/** A campaign takes it as a preemption: another attempt, counted toward no budget. */
export function isPreemption(type: string | undefined): boolean {
  return failureEntry(type)?.campaign === 'preempted';
}
