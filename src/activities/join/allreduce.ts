import { join } from 'node:path';
import { z } from 'zod';
import { buildPyModulesPackage, ensurePackageUploaded } from '../../backends/ray/py-modules.js';
import { REPO_ROOT } from '../../config/config.js';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import {
  ALLREDUCE_PROBE_MODULE,
  PROBE_PACKAGE,
  allReduceArgv,
  shellQuote,
} from '../../domain/ragen/entrypoint.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { submissionId } from '../../domain/spec/naming.js';
import { allReduceResultsPath, environmentResultsPath, runCheckpointDir } from '../../domain/spec/paths.js';
import { environmentProbeArgv } from '../../domain/join/environment-probe.js';
import { joinChecksArgv } from '../../domain/join/join-checks.js';
import { AllReduceResultSchema, type AllReduceResult } from '../../domain/run/results.js';
import { backendOf } from '../common/backend-of.js';
import { rayHeadOf } from '../common/ray-head-of.js';
import { allReduceSeconds } from '../../domain/join/checks.js';
import { makeSharedDir, sharedGroup } from '../common/shared-dirs.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { probeImportFailure } from './probe-import.js';
import { logTail } from '../../domain/train/log-tail.js';
import { runRayJob } from '../common/ray-job.js';
import { environmentOfJob } from './environment-probe.js';
import { recordLinkSuspects } from '../node-health/link-suspects.js';
import { workflowIdOfActivity } from '../common/heartbeat-loop.js';

const RESULT_LINE = /ALLREDUCE_RESULT (\{.*\})/;

/** A result line with ok false: the probe's own reason (its failure lines carry no `path`). */
export function probeReportedFailure(line: string): string | undefined {
  try {
    const parsed = z
      .object({ ok: z.literal(false), reason: z.string().optional() })
      .safeParse(JSON.parse(line));
    return parsed.success ? (parsed.data.reason ?? 'the probe reported ok: false') : undefined;
  } catch {
    return undefined;
  }
}

/** The probe's reason and, when its suspects went into the node ledger, that sentence. */
function withRecorded(reason: string | undefined, recorded: string | undefined): string | undefined {
  return reason && recorded ? `${reason}; ${recorded}` : reason;
}

/**
 * Stage 4b, one Ray job (join-checks.ts). First the environment probe (environment-probe.ts): every
 * node has what the trainer needs, or ImageContractUnmet lists what is missing. Then every GPU slot of the joined cluster takes part in an all-reduce (NCCL on GPUs; gloo or a
 * numpy ring over Ray where there are none). The probe (`ragen_probes`, from the repository's probes/)
 * travels with the job as a runtime_env py_modules package, so the image needs only Ray and numpy.
 * Fails permanently with AllReduceFailed when the sum is wrong, it hangs past its bounded timeout, or
 * the bus bandwidth is under the spec's floor (the workflow then resubmits), and with
 * ProbeUnavailable when the probe cannot be loaded on the image at all (no resubmit can fix that).
 * Idempotent: the package is content-addressed and the job has a fixed submission id.
 */
export function createAllReduceCheck(deps: ActivityDeps) {
  return async function allReduceCheck(input: {
    spec: ExperimentSpec;
    handle: ClusterHandle;
    runDir: string;
    /** The run's trainer.default_local_dir (a campaign's is its own); absent from workflows that predate the probe. */
    checkpointDir?: string;
  }): Promise<AllReduceResult> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const dashboard = await rayHeadOf(deps, handle);
    const pkg = await buildPyModulesPackage(deps.probesDir ?? join(REPO_ROOT, 'probes'), PROBE_PACKAGE);
    await ensurePackageUploaded(dashboard, pkg);
    // The probes' drivers (on the head Pod) write their results into the run's folder, and the
    // environment probe proves the Pods' user can write the checkpoint folder the worker made.
    const checkpointDir =
      input.checkpointDir ?? runCheckpointDir(spec.storage, spec.name, workflowIdOfActivity());
    await makeSharedDir(input.runDir, sharedGroup(spec));
    await makeSharedDir(checkpointDir, sharedGroup(spec));
    // The environment probe, then the all-reduce, as one Ray job (join-checks.ts): one job start fewer.
    const environmentArgv = backend.resolveArgv(
      environmentProbeArgv(spec, checkpointDir, environmentResultsPath(input.runDir, handle.name)),
    );
    const outPath = allReduceResultsPath(input.runDir, handle.name);
    const argv = backend.resolveArgv(allReduceArgv(spec, allReduceSeconds(spec), outPath));
    const started = performance.now();
    const { job, logs } = await runRayJob(
      dashboard,
      submissionId(handle.name, 'checks'),
      shellQuote(joinChecksArgv(environmentArgv, argv)),
      { pollIntervalMs: deps.pollIntervalMs, pyModules: [pkg.uri] },
    );
    const environment = environmentOfJob({
      spec,
      job,
      logs,
      python: environmentArgv[0]!,
      packageUri: pkg.uri,
      jobSeconds: Math.round(performance.now() - started) / 1000,
    });
    const line = RESULT_LINE.exec(logs)?.[1];
    const result = line ? AllReduceResultSchema.safeParse(JSON.parse(line)) : undefined;
    const recorded = await recordLinkSuspects(backend, line, handle, deps.nodeSuspectHours ?? 24);
    const failed = line ? withRecorded(probeReportedFailure(line), recorded) : undefined;
    // The probe ran and said why it failed (a node died under it, a timeout): the workflow resubmits.
    if (!result?.success && failed) {
      throw permanent(ErrorTypes.AllReduceFailed, `all-reduce check failed: ${failed}`, { reason: failed });
    }
    if (!result?.success) {
      const importFailure = job.status === 'FAILED' ? probeImportFailure(logs, job.message) : undefined;
      if (importFailure) {
        const image = spec.image ?? `none (local backend: ${argv[0]})`;
        throw permanent(
          ErrorTypes.ProbeUnavailable,
          `the all-reduce probe ${ALLREDUCE_PROBE_MODULE} (shipped as ${pkg.uri}) could not be loaded on the cluster of image ${image}: ${importFailure}. ` +
            `The probe needs only ray and numpy (torch optional) in the image's python; a new cluster of the same image cannot fix this, so it is not resubmitted. Log tail:\n${logTail(logs)}`,
          { module: ALLREDUCE_PROBE_MODULE, image, package: pkg.uri, cause: importFailure },
        );
      }
      throw permanent(
        ErrorTypes.AllReduceFailed,
        `all-reduce check printed no result (job ${job.status}: ${job.message}); log tail:\n${logTail(logs)}`,
      );
    }
    const data = { ...result.data, probePackage: pkg.uri, environment };
    if (job.status !== 'SUCCEEDED' || !data.ok) {
      throw permanent(
        ErrorTypes.AllReduceFailed,
        `all-reduce check failed: ${withRecorded(data.reason ?? job.message, recorded)}`,
        data,
      );
    }
    const floor = spec.join.minBusBandwidthGbps;
    if ((data.bus_bandwidth_gbps ?? 0) < floor) {
      throw permanent(
        ErrorTypes.AllReduceFailed,
        `all-reduce bus bandwidth ${data.bus_bandwidth_gbps} GB/s is under the floor ${floor} GB/s (join.minBusBandwidthGbps)`,
        data,
      );
    }
    return data;
  };
}
