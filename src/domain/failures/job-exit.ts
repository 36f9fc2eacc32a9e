import { ErrorTypes, type ErrorType } from './error-types.js';

/**
 * What a failed training job means, from its exit code (Ray's JobInfo.driver_exit_code) and its
 * log. Exit codes are the payload's documented ones (payload/README.md); RAGEN itself exits 1 for
 * everything (Hydra reports any exception), so its config errors and GPU shortfalls are recognised
 * by what Hydra, RAGEN and verl print (contract §1.1, §1.4, §1.6). Pure: unit-tested without Ray.
 */
export const PAYLOAD_EXIT = { ok: 0, failed: 1, config: 2, resources: 3, checkpoint: 4 } as const;

/** Lines that name a full disk: errno 28 from Python, ENOSPC from Node or C, torch's message. */
const DISK_FULL = /No space left on device|\bENOSPC\b|\[Errno 28\]|errno: 28\b/i;

/** Hydra override and OmegaConf errors, and RAGEN's pre-flight asserts (before Ray is touched). */
const CONFIG_ERROR =
  /Could not override '|Could not append to config|Key '[^']*' is not in struct|ConfigCompositionException|omegaconf\.errors\.|Error merging override|mismatched input .* expecting|in add_dependency_and_validate_config|^config error: /m;

/**
 * verl's resource check (ray_trainer.py `_check_resource_available`: the available count is a sum of
 * Ray's float resources, `Total available GPUs 1.0 is less than total desired GPUs 2`) and the
 * payload's resource errors.
 */
const RESOURCE_ERROR =
  /Total available GPUs [\d.]+ is less than total desired GPUs [\d.]+|^resource error: /m;

/**
 * CPython's message when the script to run does not exist (exit 2, before any of it runs):
 * `python3: can't open file '/workspace/RAGEN/train.py': [Errno 2] No such file or directory`.
 * Python 3.9+ prints the path made absolute against the working directory.
 */
const CANT_OPEN = /can't open file '([^']+)': \[Errno (\d+)\]/;

export interface JobFailure {
  type: ErrorType;
  /** What happened and what to do, for the stage record. */
  reason: string;
}

/** The first log line matching `pattern`, trimmed, to quote in a message. */
export function firstMatchingLine(logs: string, pattern: RegExp): string | undefined {
  return logs
    .split('\n')
    .find((l) => pattern.test(l))
    ?.trim();
}

export function diskFullLine(logs: string): string | undefined {
  return firstMatchingLine(logs, DISK_FULL);
}

/**
 * Classify a job that ended FAILED. A full disk wins over everything (it can surface as any exit
 * code); then the exit code; then, for exit 1 or an unknown code, what the log says.
 */
export function classifyJobFailure(exitCode: number | undefined, logs: string): JobFailure {
  const disk = diskFullLine(logs);
  if (disk) return { type: ErrorTypes.CheckpointDiskFull, reason: `the checkpoint volume is full (${disk})` };
  const code = exitCode === undefined ? 'unknown exit code' : `exit ${exitCode}`;
  const missing = exitCode === PAYLOAD_EXIT.config ? entrypointNotFound(logs) : undefined;
  if (missing) return missing;
  if (exitCode === PAYLOAD_EXIT.config || CONFIG_ERROR.test(logs)) {
    const line = firstMatchingLine(logs, CONFIG_ERROR);
    return {
      type: ErrorTypes.TrainingConfigInvalid,
      reason: `the trainer refused its configuration (${code}${line ? `: ${line}` : ''}); fix trainer.overrides or the spec, another attempt cannot`,
    };
  }
  if (exitCode === PAYLOAD_EXIT.resources || RESOURCE_ERROR.test(logs)) {
    const line = firstMatchingLine(logs, RESOURCE_ERROR);
    return {
      type: ErrorTypes.TrainingResourceShortfall,
      reason: `the trainer found too few GPUs or could not place its workers (${code}${line ? `: ${line}` : ''})`,
    };
  }
  if (exitCode === PAYLOAD_EXIT.checkpoint) {
    const line = firstMatchingLine(logs, /^checkpoint error: /m);
    return {
      type: ErrorTypes.CheckpointUnusable,
      reason: `the trainer refused a checkpoint (${code}${line ? `: ${line}` : ''})`,
    };
  }
  return { type: ErrorTypes.TrainingFailed, reason: `the trainer crashed (${code})` };
}

/**
 * Exit 2 with CPython's "can't open file": the entrypoint's script is not in the image where the
 * job runs. Names the file and the working directory it was looked for in (the path's folder when
 * Python printed it absolute) and the fields that fix it.
 */
function entrypointNotFound(logs: string): JobFailure | undefined {
  const m = CANT_OPEN.exec(logs);
  if (!m?.[1]) return undefined;
  const file = m[1];
  const slash = file.lastIndexOf('/');
  const where =
    slash > 0
      ? `the working directory ${file.slice(0, slash)}`
      : slash === 0
        ? 'the working directory /'
        : "the job's working directory";
  return {
    type: ErrorTypes.EntrypointNotFound,
    reason: `python cannot open ${file} (exit 2, errno ${m[2]}): the entrypoint's script is not in ${where} of the image; set kuberay.head.workingDir to the folder holding it in the image (RAGEN's checkout), or write trainer.entrypoint with the script's absolute path`,
  };
}

/**
 * Whether a log line is evidence classifyJobFailure reads (a full disk, a config or resource
 * error, a refused checkpoint): an incremental reader keeps such lines from anywhere in the log
 * and the log's last lines, rather than the whole log.
 */
export function isFailureEvidence(line: string): boolean {
  return (
    DISK_FULL.test(line) ||
    CANT_OPEN.test(line) ||
    CONFIG_ERROR.test(line) ||
    RESOURCE_ERROR.test(line) ||
    /^checkpoint error: /.test(line)
  );
}
