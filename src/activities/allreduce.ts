import type { ClusterHandle } from '../spec/cluster.js';
import { allReduceArgv, shellQuote } from '../spec/entrypoint.js';
import { ErrorTypes } from '../spec/error-types.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { submissionId } from '../spec/naming.js';
import { allReduceResultsPath } from '../spec/paths.js';
import { AllReduceResultSchema, type AllReduceResult } from '../spec/results.js';
import { backendOf } from './backend-of.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';
import { logTail, runRayJob } from './ray-job.js';

const RESULT_LINE = /ALLREDUCE_RESULT (\{.*\})/;

/**
 * Stage 4b. Every GPU slot of the joined cluster takes part in an all-reduce (NCCL on GPUs; the CPU
 * stand-in over Ray where there are none). Fails permanently when the sum is wrong, it hangs past its
 * bounded timeout, or the bus bandwidth is under the spec's floor; the workflow then resubmits.
 */
export function createAllReduceCheck(deps: ActivityDeps) {
  return async function allReduceCheck(input: { spec: ExperimentSpec; handle: ClusterHandle; runDir: string }): Promise<AllReduceResult> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const dashboard = deps.rayHead(handle.dashboardUrl ?? '');
    const outPath = allReduceResultsPath(input.runDir, handle.name);
    const argv = backend.resolveArgv(allReduceArgv(spec, 60, outPath));
    const { job, logs } = await runRayJob(dashboard, submissionId(handle.name, 'allreduce'), shellQuote(argv), { pollIntervalMs: deps.pollIntervalMs });
    const line = RESULT_LINE.exec(logs)?.[1];
    const result = line ? AllReduceResultSchema.safeParse(JSON.parse(line)) : undefined;
    if (!result?.success) {
      throw permanent(ErrorTypes.AllReduceFailed, `all-reduce check printed no result (job ${job.status}: ${job.message}); log tail:\n${logTail(logs)}`);
    }
    if (job.status !== 'SUCCEEDED' || !result.data.ok) {
      throw permanent(ErrorTypes.AllReduceFailed, `all-reduce check failed: ${result.data.reason ?? job.message}`, result.data);
    }
    const floor = spec.join.minBusBandwidthGbps;
    if ((result.data.bus_bandwidth_gbps ?? 0) < floor) {
      throw permanent(ErrorTypes.AllReduceFailed, `all-reduce bus bandwidth ${result.data.bus_bandwidth_gbps} GB/s is under the floor ${floor} GB/s (join.minBusBandwidthGbps)`, result.data);
    }
    return result.data;
  };
}
