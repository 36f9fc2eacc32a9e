import type { ExperimentSpec } from './experiment.js';

/**
 * Argument vectors for the payload, built from the spec. They stay vectors up to the one place that
 * must produce a shell string (the Ray Jobs API), which quotes every argument.
 */

export type ResumeFrom = { mode: 'disable' } | { mode: 'resume_path'; path: string };

/** RAGEN train.py overrides (contract §7.2); resume is always explicit, never a silent `auto`. */
export function trainArgv(spec: ExperimentSpec, checkpointDir: string, resume: ResumeFrom): string[] {
  const t = spec.trainer;
  const argv = [
    ...t.entrypoint,
    '--config-name',
    t.configName,
    `trainer.nnodes=${t.nnodes}`,
    `trainer.n_gpus_per_node=${t.nGpusPerNode}`,
    `trainer.default_local_dir=${checkpointDir}`,
    `trainer.total_training_steps=${t.totalTrainingSteps}`,
    `trainer.save_freq=${t.saveFreq}`,
    `trainer.test_freq=${t.testFreq}`,
    `trainer.resume_mode=${resume.mode}`,
    "trainer.logger=['console','file']",
    `trainer.experiment_name=${spec.name}`,
    `seed.train=${t.seedTrain}`,
    `seed.val=${spec.validation.seed}`,
    '+ray_kwargs.ray_init.address=auto',
  ];
  // Keep every checkpoint the run makes (verl keeps 1 by default): nothing a run made is lost.
  if (!('trainer.max_actor_ckpt_to_keep' in t.overrides)) argv.push('trainer.max_actor_ckpt_to_keep=null');
  if (resume.mode === 'resume_path') argv.push(`trainer.resume_from_path=${resume.path}`);
  for (const [key, value] of Object.entries(t.overrides)) argv.push(`${key}=${String(value)}`);
  return argv;
}

export function validateArgv(spec: ExperimentSpec, checkpointPath: string, outPath: string): string[] {
  return [
    'python',
    '-m',
    'ragen_toy.validate',
    '--checkpoint',
    checkpointPath,
    '--episodes',
    String(spec.validation.episodes),
    '--seed',
    String(spec.validation.seed),
    '--out',
    outPath,
  ];
}

/** The probe package the orchestrator ships with probe jobs (probes/ragen_probes) and its all-reduce module. */
export const PROBE_PACKAGE = 'ragen_probes';
export const ALLREDUCE_PROBE_MODULE = `${PROBE_PACKAGE}.allreduce`;

export function allReduceArgv(spec: ExperimentSpec, timeoutSeconds: number, outPath: string): string[] {
  return [
    'python',
    '-m',
    ALLREDUCE_PROBE_MODULE,
    '--world-size',
    String(spec.trainer.nnodes * spec.trainer.nGpusPerNode),
    '--gpus-per-node',
    String(spec.trainer.nGpusPerNode),
    '--address',
    'auto',
    '--size-mb',
    String(spec.join.allReduceSizeMb),
    '--timeout-s',
    String(timeoutSeconds),
    '--out',
    outPath,
  ];
}

/** POSIX single-quote each argument: the result runs the same argv under any /bin/sh. */
export function shellQuote(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
