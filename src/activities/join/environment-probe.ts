import type { RayJobInfo } from '../../backends/ray/dashboard-client.js';
import {
  ENVIRONMENT_PROBE_MODULE,
  type EnvironmentRecord,
  type EnvironmentResult,
  EnvironmentResultSchema,
  describeEnvironmentFailures,
} from '../../domain/join/environment-probe.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { logTail } from '../../domain/train/log-tail.js';
import { modelDirectory } from '../../domain/model/model.js';
import { permanent } from '../common/failures.js';
import { probeImportFailure } from './probe-import.js';

const RESULT_LINE = /ENVIRONMENT_RESULT (\{.*\})/;

/** The model as trained: a hub model's pinned revision, or the fingerprint every node computed. */
function modelRecord(spec: ExperimentSpec, result: EnvironmentResult): EnvironmentRecord['model'] {
  if (!spec.model) return undefined;
  const path = modelDirectory(spec.model);
  if (spec.model.hub !== undefined)
    return { path, source: 'hub', hub: spec.model.hub, revision: spec.model.revision };
  const seen = new Set(
    result.nodes
      .map((n) => (n['model'] as { revision?: unknown } | undefined)?.revision)
      .filter((r): r is string => typeof r === 'string'),
  );
  return { path, source: 'path', ...(seen.size === 1 ? { revision: [...seen][0] } : {}) };
}

/**
 * The environment probe's result (stage 4b, before the all-reduce, inside the same activity and
 * Ray job: join-checks.ts): one task per node checked what the image must provide (see
 * probes/ragen_probes/environment.py). Every failed item is listed in one ImageContractUnmet, a
 * permanent failure the workflow does not resubmit: a fresh cluster of the same image fails alike.
 */
export function environmentOfJob(input: {
  spec: ExperimentSpec;
  job: RayJobInfo;
  logs: string;
  /** The probe's interpreter (argv[0]) where the spec names no image. */
  python: string;
  packageUri: string;
  /** The job's submit to its logs read back (both checks: they share the job). */
  jobSeconds: number;
}): EnvironmentRecord {
  const { spec, job, logs } = input;
  const line = RESULT_LINE.exec(logs)?.[1];
  const parsed = line ? EnvironmentResultSchema.safeParse(JSON.parse(line)) : undefined;
  const image = spec.image ?? `none (local backend: ${input.python})`;
  if (!parsed?.success) {
    const importFailure = job.status === 'FAILED' ? probeImportFailure(logs, job.message) : undefined;
    throw permanent(
      importFailure ? ErrorTypes.ProbeUnavailable : ErrorTypes.ClusterLost,
      `the environment probe ${ENVIRONMENT_PROBE_MODULE} (shipped as ${input.packageUri}) printed no result on the cluster of image ${image} ` +
        `(job ${job.status}: ${importFailure ?? job.message}); log tail:\n${logTail(logs)}`,
      { module: ENVIRONMENT_PROBE_MODULE, image, package: input.packageUri },
    );
  }
  const result = parsed.data;
  const record: EnvironmentRecord = {
    ...result,
    probePackage: input.packageUri,
    // From submit to the results read back, of the job both checks share (wall_s is the probe's own time).
    jobSeconds: input.jobSeconds,
    model: modelRecord(spec, result),
  };
  if (result.failures.length > 0) {
    throw permanent(
      ErrorTypes.ImageContractUnmet,
      `the image ${image} does not meet what the trainer needs (${result.failures.length} item(s); a new cluster of the same image cannot fix this, so it is not resubmitted):\n` +
        describeEnvironmentFailures(result.failures),
      { failures: result.failures, environment: record },
    );
  }
  if (!result.ok) {
    // No item failed but a node never answered: a lost node, which a fresh cluster may fix.
    throw permanent(ErrorTypes.ClusterLost, `environment probe: ${result.reason ?? job.message}`, {
      environment: record,
    });
  }
  return record;
}
