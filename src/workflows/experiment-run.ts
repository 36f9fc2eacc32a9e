import type { JoinResult } from '../activities/join/join.js';
import type { VerifyResult } from '../activities/verify/verify.js';
import { stepOfCheckpointPath } from '../domain/campaign/campaign.js';
import type { ClusterHandle } from '../domain/cluster/cluster.js';
import { type ResumeFrom, trainArgv } from '../domain/ragen/entrypoint.js';
import type {
  ExperimentInput,
  ExperimentResult,
  ExperimentStatus,
  Pruning,
} from '../domain/run/experiment-input.js';
import { codeCommits } from '../domain/code/code-commits.js';
import { workerGpus } from '../domain/spec/experiment.js';
import { gpuUsageOfStages } from '../domain/usage/gpu-usage.js';
import { splitProbeResults } from '../domain/join/environment-probe.js';
import type { ManifestDraft } from '../domain/run/manifest.js';
import { runArchiveDir, runCheckpointDir, validationResultsPath } from '../domain/spec/paths.js';
import type {
  AllReduceResult,
  Outcome,
  PreflightCheck,
  StageRecord,
  ValidationResult,
} from '../domain/run/results.js';
import type { TrackingOutcome } from '../domain/tracking/tracking.js';
import type { RunBudget } from './run-budget.js';
import type { StageName } from '../domain/run/results.js';
import { type RunIds, runIds } from './run-ids.js';

/**
 * Everything one experiment run knows, filled in by the workflow's steps in order. Pure functions
 * below read it (the manifest draft, the result), so they are tested without a server.
 */
export interface ExperimentRun {
  input: ExperimentInput;
  ids: RunIds;
  checkpointDir: string;
  /** `<archiveDir>/<name>/<workflow id>`: manifest, validation and all-reduce results. */
  runDir: string;
  resume: ResumeFrom;
  /** What the status queries answer. */
  status: ExperimentStatus;
  stages: StageRecord[];
  /** The cluster that may exist (set before its create returns, so teardown can find it). */
  handle?: ClusterHandle;
  preflightChecks: PreflightCheck[];
  verified?: VerifyResult;
  joined?: JoinResult;
  allReduce?: AllReduceResult;
  /** The environment probe's findings from an ImageContractUnmet's details: the manifest keeps them. */
  failedEnvironmentProbe?: unknown;
  validationResult?: ValidationResult;
  finalStep?: number;
  /** RAGEN stopped on its own (no final save): the step and reasons. */
  earlyStopped?: ExperimentResult['training']['earlyStopped'];
  submits: number;
  training: Outcome;
  validation: Outcome;
  archive: Outcome & { manifestPath?: string };
  teardown: Outcome;
  /** The run in the experiment tracker, once recorded (absent without `tracking` in the spec). */
  tracking?: TrackingOutcome;
  /** Checkpoint step current when a pause was asked for: training stops at the first one above it. */
  stopAfterCheckpoint?: number;
  pausedAtCheckpoint: boolean;
  /** A sweep's scheduler asked this run to stop (signal), and whether training was stopped for it. */
  stopRequest?: Pruning;
  pruned?: Pruning;
  /** Why the run failed or was cancelled; undefined while it has not. */
  failure?: unknown;
  outcome?: ExperimentResult['outcome'];
  /** The run's reservation in its team's budget (team-budget patch). */
  budget?: RunBudget;
  /** Search attributes and current details (set by the workflow; absent in pure tests). */
  visible?: RunVisibility;
}

/** What the workflow tells its visibility (search attributes, current details) as the run moves. */
export interface RunVisibility {
  stageStarted(stage: StageName | 'done'): void;
  progressed(newCheckpoint: boolean): void;
}

export function newExperimentRun(input: ExperimentInput, info: RunIds): ExperimentRun {
  const { spec } = input;
  const ids = runIds(info);
  const resumedStep = stepOfCheckpointPath(input.resumeFrom);
  return {
    input,
    ids,
    checkpointDir: input.checkpointDir ?? runCheckpointDir(spec.storage, spec.name, ids.workflowId),
    runDir: runArchiveDir(spec.storage, spec.name, ids.workflowId),
    resume: input.resumeFrom ? { mode: 'resume_path', path: input.resumeFrom } : { mode: 'disable' },
    status: {
      stage: 'preflight',
      attempt: 0,
      joinedWorkers: 0,
      gpusRegistered: 0,
      lastStep: resumedStep,
      lastCheckpointStep: resumedStep,
    },
    stages: [],
    preflightChecks: [],
    submits: 0,
    training: { outcome: 'skipped' },
    validation: { outcome: 'skipped' },
    archive: { outcome: 'skipped' },
    teardown: { outcome: 'skipped' },
    pausedAtCheckpoint: false,
  };
}

/**
 * The manifest as the workflow knows it; the archive activity adds checkpoint hashes. The last
 * stage record is the archive's own: its start is the manifest's writtenAt, fixed for retries.
 */
export function buildManifestDraft(run: ExperimentRun): ManifestDraft {
  const { spec, provenance, resumeFrom } = run.input;
  const { verified, joined, validationResult } = run;
  const image = verified?.image ?? { verified: false, note: 'verify did not run' };
  const probes = splitProbeResults(run.allReduce, run.failedEnvironmentProbe);
  return {
    experiment: spec.name,
    temporal: { ...run.ids },
    provenance,
    commits: codeCommits(spec, provenance, image),
    image,
    rayVersion: {
      declared: spec.rayVersion,
      planned: verified?.plannedRayVersion,
      observedOnHead: joined?.headRayVersion,
    },
    environment: {
      envTag: spec.validation.envTag,
      overrides: spec.trainer.overrides,
      ...(probes.environment ? { probe: probes.environment } : {}),
    },
    seeds: { train: spec.trainer.seedTrain, val: spec.validation.seed },
    resolvedSpec: spec,
    entrypoint: trainArgv(spec, run.checkpointDir, run.resume),
    cluster: {
      backend: spec.backend,
      handle: run.handle,
      shape: {
        headCpus: spec.cluster.head.cpus,
        workerGroups: spec.cluster.workerGroups.map((g) => ({
          name: g.name,
          replicas: g.replicas,
          gpusPerWorker: g.gpusPerWorker,
        })),
      },
      nodes: joined?.nodes ?? [],
      submits: run.submits,
    },
    preflight: { checks: run.preflightChecks, allReduce: probes.allReduce },
    resumedFrom: resumeFrom,
    checkpointDir: run.checkpointDir,
    training: {
      ...run.training,
      finalStep: run.finalStep,
      totalTrainingSteps: spec.trainer.totalTrainingSteps,
      ...(run.earlyStopped ? { earlyStopped: run.earlyStopped } : {}),
    },
    validation: {
      ...run.validation,
      result: validationResult ? { ...validationResult, records: undefined } : undefined,
      resultsPath: validationResult ? validationResultsPath(run.runDir) : undefined,
    },
    stages: run.stages.map((s) => ({ ...s })),
    // The archive's own record starts now: the cluster (torn down next) counts until this time.
    gpuUsage: gpuUsageOfStages(run.stages, workerGpus(spec), run.stages.at(-1)?.startedAt ?? '', spec.cost),
    ...(run.pruned ? { pruned: run.pruned } : {}),
    outcome: run.outcome ?? 'failed',
  };
}

/** The workflow's result (also the details of its failure). */
export function experimentResult(run: ExperimentRun): ExperimentResult {
  return {
    outcome: run.outcome ?? 'failed',
    training: {
      ...run.training,
      finalStep: run.finalStep,
      ...(run.earlyStopped ? { earlyStopped: run.earlyStopped } : {}),
    },
    validation: { ...run.validation, successRate: run.validationResult?.success_rate },
    archive: run.archive,
    teardown: run.teardown,
    stages: run.stages,
    checkpointDir: run.checkpointDir,
    submits: run.submits,
    ...(run.tracking ? { tracking: run.tracking } : {}),
    gpuUsage: gpuUsageOfStages(
      run.stages,
      workerGpus(run.input.spec),
      run.stages.at(-1)?.endedAt ?? run.stages.at(-1)?.startedAt ?? '',
      run.input.spec.cost,
    ),
    ...(run.pruned ? { pruned: run.pruned } : {}),
  };
}
