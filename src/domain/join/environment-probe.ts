import { z } from 'zod';
import { PROBE_PACKAGE, defaultEntrypoint, withInterpreter } from '../ragen/entrypoint.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { resolvedImageContract } from './image-contract.js';
import { modelDirectory } from '../model/model.js';
import type { AllReduceResult } from '../run/results.js';

export const ENVIRONMENT_PROBE_MODULE = `${PROBE_PACKAGE}.environment`;

/** The environment probe's own budget: imports of torch and vLLM on a cold node take seconds, not minutes. */
export const ENVIRONMENT_PROBE_TIMEOUT_S = 120;

/** The trainer's argv before its overrides: the file (or module) the probe looks for. */
export function trainerEntrypoint(spec: ExperimentSpec): string[] {
  return withInterpreter(spec, spec.trainer.entrypoint ?? defaultEntrypoint(spec.backend));
}

export function environmentProbeArgv(spec: ExperimentSpec, checkpointDir: string, outPath: string): string[] {
  const contract = resolvedImageContract(spec, trainerEntrypoint(spec));
  return withInterpreter(spec, [
    'python',
    '-m',
    ENVIRONMENT_PROBE_MODULE,
    '--address',
    'auto',
    '--checkpoint-dir',
    checkpointDir,
    '--requires',
    contract.requires.join(','),
    '--gpus-per-node',
    String(contract.gpuCheck ? spec.trainer.nGpusPerNode : 0),
    '--min-free-gb',
    String(spec.storage.checkpointSizeGb ?? 0),
    '--entrypoint-json',
    JSON.stringify(trainerEntrypoint(spec)),
    '--timeout-s',
    String(ENVIRONMENT_PROBE_TIMEOUT_S),
    '--out',
    outPath,
    ...(contract.python ? ['--python', contract.python] : []),
    ...(spec.model ? ['--model-path', modelDirectory(spec.model)] : []),
  ]);
}

export const EnvironmentFailureSchema = z.object({
  item: z.string(),
  node: z.string(),
  found: z.string(),
  fix: z.string(),
});
export type EnvironmentFailure = z.infer<typeof EnvironmentFailureSchema>;

/** The probe's result line; per-node findings pass through to the manifest as the probe wrote them. */
export const EnvironmentResultSchema = z
  .object({
    ok: z.boolean(),
    wall_s: z.number().optional(),
    nodes: z.array(z.record(z.string(), z.unknown())),
    entrypoint: z.record(z.string(), z.unknown()).optional(),
    failures: z.array(EnvironmentFailureSchema),
    reason: z.string().optional(),
  })
  .passthrough();
export type EnvironmentResult = z.infer<typeof EnvironmentResultSchema>;

/** The model as trained: a hub model's pinned revision, or the fingerprint (sha256 of config.json and the weight index) every node computed. */
export const ModelRecordSchema = z.strictObject({
  path: z.string(),
  source: z.enum(['path', 'hub']),
  hub: z.string().optional(),
  revision: z.string().optional(),
});
export type ModelRecord = z.infer<typeof ModelRecordSchema>;

/** What the manifest records under `environment.probe`. */
export const EnvironmentRecordSchema = EnvironmentResultSchema.extend({
  probePackage: z.string(),
  /** Seconds from the probe job's submission to its result, as the worker saw them. */
  jobSeconds: z.number().optional(),
  model: ModelRecordSchema.optional(),
});
export type EnvironmentRecord = z.infer<typeof EnvironmentRecordSchema>;

/**
 * The all-reduce activity returns the environment probe's record inside its result (one activity,
 * so histories are unchanged); the manifest keeps the two apart.
 */
export function splitProbeResults(
  allReduce: AllReduceResult | undefined,
  failedProbe?: unknown,
): { allReduce: AllReduceResult | undefined; environment: EnvironmentRecord | undefined } {
  const rest = allReduce ? { ...allReduce } : undefined;
  const environment = rest?.['environment'];
  if (rest) delete rest['environment'];
  const parsed = EnvironmentRecordSchema.safeParse(environment ?? failedProbe);
  return { allReduce: rest, environment: parsed.success ? parsed.data : undefined };
}

/** The probe's record carried in an ImageContractUnmet's details (`{ failures, environment }`). */
export function environmentOfFailureDetails(details: readonly unknown[]): unknown {
  const first = details[0];
  return first && typeof first === 'object' && 'environment' in first ? first.environment : undefined;
}

/** One line per failed item: what, where, what was found, and the fix. */
export function describeEnvironmentFailures(failures: readonly EnvironmentFailure[]): string {
  return failures.map((f) => `- ${f.item} on ${f.node}: ${f.found}; fix: ${f.fix}`).join('\n');
}
