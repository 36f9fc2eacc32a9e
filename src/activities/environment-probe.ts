import type { RayHeadApi } from '../backends/ray/dashboard-client.js';
import type { ComputeBackend } from '../backends/backend.js';
import type { ClusterHandle } from '../domain/cluster.js';
import { shellQuote } from '../domain/entrypoint.js';
import {
  ENVIRONMENT_PROBE_MODULE,
  type EnvironmentRecord,
  type EnvironmentResult,
  EnvironmentResultSchema,
  describeEnvironmentFailures,
  environmentProbeArgv,
} from '../domain/environment-probe.js';
import { ErrorTypes } from '../domain/error-types.js';
import type { ExperimentSpec } from '../domain/experiment.js';
import { logTail } from '../domain/log-tail.js';
import { modelDirectory } from '../domain/model.js';
import { submissionId } from '../domain/naming.js';
import { environmentResultsPath } from '../domain/paths.js';
import { permanent } from './failures.js';
import { probeImportFailure } from './probe-import.js';
import { runRayJob } from './ray-job.js';

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
 * The environment probe (stage 4b, before the all-reduce, inside the same activity so workflow
 * histories are unchanged): one task per node checks what the image must provide (see
 * probes/ragen_probes/environment.py). Every failed item is listed in one ImageContractUnmet, a
 * permanent failure the workflow does not resubmit: a fresh cluster of the same image fails alike.
 */
export async function runEnvironmentProbe(input: {
  spec: ExperimentSpec;
  handle: ClusterHandle;
  backend: ComputeBackend;
  dashboard: RayHeadApi;
  packageUri: string;
  runDir: string;
  checkpointDir: string;
  pollIntervalMs: number;
}): Promise<EnvironmentRecord> {
  const { spec, handle, backend } = input;
  const argv = backend.resolveArgv(
    environmentProbeArgv(spec, input.checkpointDir, environmentResultsPath(input.runDir, handle.name)),
  );
  const started = performance.now();
  const { job, logs } = await runRayJob(
    input.dashboard,
    submissionId(handle.name, 'environment'),
    shellQuote(argv),
    {
      pollIntervalMs: input.pollIntervalMs,
      pyModules: [input.packageUri],
    },
  );
  const line = RESULT_LINE.exec(logs)?.[1];
  const parsed = line ? EnvironmentResultSchema.safeParse(JSON.parse(line)) : undefined;
  const image = spec.image ?? `none (local backend: ${argv[0]})`;
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
    // From submit to the result read back: what the probe adds to a run (wall_s is its driver's own time).
    jobSeconds: Math.round(performance.now() - started) / 1000,
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
