import { type ExperimentSpec, nodeFloorFraction } from '../spec/experiment.js';
import { modelDirectory } from '../model/model.js';

/**
 * Argument vectors for the payload, built from the spec. They stay vectors up to the one place that
 * must produce a shell string (the Ray Jobs API), which quotes every argument.
 */

export type ResumeFrom = { mode: 'disable' } | { mode: 'resume_path'; path: string };

/** RAGEN's own entry point on kuberay (run in the image's WORKDIR: no working_dir is shipped); the toy payload locally. */
export function defaultEntrypoint(backend: ExperimentSpec['backend']): string[] {
  return backend === 'kuberay' ? ['python', 'train.py'] : ['python', '-m', 'ragen_toy.train'];
}

/** The spec's interpreter in place of a leading `python`; otherwise the backend maps `python`. */
export function withInterpreter(spec: ExperimentSpec, argv: readonly string[]): string[] {
  const python = spec.trainer.interpreter;
  return argv.map((a, i) => (i === 0 && a === 'python' && python ? python : a));
}

/**
 * `system.CUDA_VISIBLE_DEVICES` for n GPUs per node: RAGEN asserts it lists n_gpus_per_node devices
 * (its default is "0"). Quoted inside the value: Hydra reads an unquoted `0,1` as a sweep.
 */
export function cudaVisibleDevicesOverride(nGpusPerNode: number): string {
  return `system.CUDA_VISIBLE_DEVICES='${cudaVisibleDevices(nGpusPerNode)}'`;
}

/** `0,1,…,n-1`: the devices of one node's n GPUs. */
export const cudaVisibleDevices = (n: number): string => Array.from({ length: n }, (_, i) => i).join(',');

/**
 * RAGEN train.py overrides (contract §7.2); resume is always explicit, never a silent `auto`.
 * Keys RAGEN's config has, or `++` (add or override) for keys an older verl may lack;
 * test/conformance composes these argvs with RAGEN's real Hydra configuration.
 */
export function trainArgv(spec: ExperimentSpec, checkpointDir: string, resume: ResumeFrom): string[] {
  const t = spec.trainer;
  const loggers: readonly string[] = t.loggers;
  const argv = [
    ...withInterpreter(spec, t.entrypoint ?? defaultEntrypoint(spec.backend)),
    '--config-name',
    t.configName,
    `trainer.nnodes=${t.nnodes}`,
    `trainer.n_gpus_per_node=${t.nGpusPerNode}`,
    `trainer.default_local_dir=${checkpointDir}`,
    `trainer.total_training_steps=${t.totalTrainingSteps}`,
    `trainer.save_freq=${t.saveFreq}`,
    `trainer.test_freq=${t.testFreq}`,
    `trainer.resume_mode=${resume.mode}`,
    `trainer.logger=[${loggers.map((l) => `'${l}'`).join(',')}]`,
    `trainer.experiment_name=${spec.name}`,
    `seed.train=${t.seedTrain}`,
    `seed.val=${spec.validation.seed}`,
    // verl 0.6.1 declares ray_kwargs.ray_init without an address; older verl has no ray_kwargs.
    '++ray_kwargs.ray_init.address=auto',
  ];
  if (t.nGpusPerNode > 1 && !('system.CUDA_VISIBLE_DEVICES' in t.overrides))
    argv.push(cudaVisibleDevicesOverride(t.nGpusPerNode));
  // RAGEN's top-level key: actor, critic and rollout read it, and its qwen/llama-3 assert reads it.
  if (spec.model) argv.push(`model_path=${modelDirectory(spec.model)}`);
  // verl's rotation stays off (RAGEN keeps 1 actor and 1 critic): it would delete a checkpoint the
  // ledger hashed, maybe the resume candidate, and an older checkpoint would lose its critic/ folder.
  // Deleting is the orchestrator's (storage.retain, between a campaign's attempts, each recorded).
  for (const key of ['trainer.max_actor_ckpt_to_keep', 'trainer.max_critic_ckpt_to_keep']) {
    if (!(key in t.overrides)) argv.push(`${key}=null`);
  }
  if (resume.mode === 'resume_path') argv.push(`trainer.resume_from_path=${resume.path}`);
  for (const [key, value] of Object.entries(t.overrides)) argv.push(`${key}=${String(value)}`);
  return argv;
}

export function validateArgv(spec: ExperimentSpec, checkpointPath: string, outPath: string): string[] {
  return withInterpreter(spec, [
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
  ]);
}

/** The probe package the orchestrator ships with probe jobs (probes/ragen_probes) and its all-reduce module. */
export const PROBE_PACKAGE = 'ragen_probes';
export const ALLREDUCE_PROBE_MODULE = `${PROBE_PACKAGE}.allreduce`;

export function allReduceArgv(spec: ExperimentSpec, timeoutSeconds: number, outPath: string): string[] {
  return withInterpreter(spec, [
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
    '--node-floor-fraction',
    String(nodeFloorFraction(spec)),
    '--out',
    outPath,
  ]);
}

/** POSIX single-quote each argument: the result runs the same argv under any /bin/sh. */
export function shellQuote(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
