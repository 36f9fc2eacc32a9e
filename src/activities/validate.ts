import { readFile } from 'node:fs/promises';
import type { ClusterHandle } from '../spec/cluster.js';
import { shellQuote, validateArgv } from '../spec/entrypoint.js';
import { ErrorTypes } from '../spec/error-types.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { submissionId } from '../spec/naming.js';
import { ValidationResultSchema, type ValidationResult } from '../spec/results.js';
import { backendOf } from './backend-of.js';
import type { ActivityDeps } from './deps.js';
import { permanent } from './failures.js';
import { logTail, runRayJob } from './ray-job.js';

/**
 * Stage 6. Separate validation episodes on the cluster: levels from validation.seed only (never
 * training levels), greedy policy from the final checkpoint. Writes results to outPath on storage.
 * A retry finds the same job (submission id) and its existing results file.
 */
export function createValidate(deps: ActivityDeps) {
  return async function validate(input: { spec: ExperimentSpec; handle: ClusterHandle; checkpointPath: string; outPath: string }): Promise<ValidationResult> {
    const { spec, handle } = input;
    const argv = backendOf(deps, spec.backend).resolveArgv(validateArgv(spec, input.checkpointPath, input.outPath));
    const dashboard = deps.rayHead(handle.dashboardUrl ?? '');
    const { job, logs } = await runRayJob(dashboard, submissionId(handle.name, 'validate'), shellQuote(argv), { pollIntervalMs: deps.pollIntervalMs });
    if (job.status !== 'SUCCEEDED') throw permanent(ErrorTypes.ValidationFailed, `validation job ${job.status}: ${job.message}\n${logTail(logs)}`);
    const parsed = ValidationResultSchema.safeParse(JSON.parse(await readFile(input.outPath, 'utf8')));
    if (!parsed.success) throw permanent(ErrorTypes.ValidationFailed, `validation results at ${input.outPath} do not match the schema: ${parsed.error.message}`);
    return parsed.data;
  };
}
