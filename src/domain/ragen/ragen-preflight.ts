import { cudaVisibleDevices, trainArgv } from './entrypoint.js';
import type { ExperimentSpec } from '../spec/experiment.js';
import { type HydraScalar, isAmbiguousValue, overrideValue, overridesOf } from './hydra-overrides.js';
import {
  KNOWN_RAGEN_REVISIONS,
  RAGEN_20DAEDC,
  type RagenRevision,
  ragenRevisionOf,
  shortCommit,
} from './ragen-revisions.js';

/**
 * What RAGEN's `train.py` asserts before Ray is touched (`add_dependency_and_validate_config`,
 * contract §1.1), checked on the overrides the product sends, so a spec RAGEN would refuse is
 * refused at load, naming the field and the fix. RAGEN's own values come from
 * RAGEN_PREFLIGHT_DEFAULTS where the argv does not set them; test/conformance proves on a matrix
 * of argvs that these rules and the real configuration agree.
 */

export type RagenRule =
  | 'micro-batch-fits'
  | 'mini-batch-divisible'
  | 'model-path'
  | 'cuda-visible-devices'
  | 'env-groups-cover-mini-batch'
  | 'tensor-parallel-size'
  | 'hydra-ambiguous-value'
  | 'env-tag-defined'
  | 'ragen-revision-known';

export interface RagenIssue {
  rule: RagenRule;
  /** Spec path of the field to fix. */
  path: (string | number)[];
  message: string;
}

/**
 * RAGEN 20daedc's values (config/base.yaml) for the keys its pre-flight reads. Two of them are
 * interpolations there: actor_rollout_ref.actor.ppo_mini_batch_size is ${ppo_mini_batch_size} and
 * actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu is ${micro_batch_size_per_gpu}.
 */
export const RAGEN_PREFLIGHT_DEFAULTS = {
  micro_batch_size_per_gpu: 1,
  ppo_mini_batch_size: 32,
  model_path: 'Qwen/Qwen2.5-3B-Instruct',
  enable_response_mask: true,
  'system.CUDA_VISIBLE_DEVICES': '0',
  'es_manager.train.env_groups': 8,
  'es_manager.train.group_size': 16,
  'actor_rollout_ref.rollout.rollout_filter_strategy': 'top_p',
  'actor_rollout_ref.rollout.rollout_filter_value': 1,
  'agent_proxy.context_window_mode': 'full',
  'agent_proxy.max_turn': 5,
  'actor_rollout_ref.rollout.tensor_model_parallel_size': 1,
} as const satisfies Record<string, HydraScalar>;

/** RAGEN's model_path rule as a message with the fix; undefined when RAGEN accepts the path. */
export function ragenModelPathIssue(
  modelPath: string,
  revision: RagenRevision = RAGEN_20DAEDC,
): string | undefined {
  const lower = modelPath.toLowerCase();
  if (revision.modelPathMarkers.some((m) => lower.includes(m))) return undefined;
  const markers = revision.modelPathMarkers.map((m) => `"${m}"`).join(' or ');
  return `RAGEN ${shortCommit(revision)}'s train.py asserts that model_path contains ${markers} ("response mask is currently only supported for qwen and llama-3 models"), but it is ${modelPath}; use a model whose path names it (a local directory such as /models/qwen2.5-0.5b-instruct), or set trainer.overrides.enable_response_mask: false`;
}

/** The value of `key` as RAGEN composes it from these overrides, its interpolations followed. */
function valueIn(overrides: Map<string, string>, key: string): HydraScalar | undefined {
  const own = overrides.get(key);
  if (own !== undefined) return overrideValue(own);
  const via: Record<string, string> = {
    'actor_rollout_ref.actor.ppo_mini_batch_size': 'ppo_mini_batch_size',
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 'micro_batch_size_per_gpu',
  };
  const source = via[key];
  if (source) return valueIn(overrides, source);
  return (RAGEN_PREFLIGHT_DEFAULTS as Record<string, HydraScalar>)[key];
}

const num = (v: HydraScalar | undefined): number => (typeof v === 'number' ? v : Number(v));

/** Spec path of a RAGEN key the spec sets through trainer.overrides, or of the product's own field. */
function fieldOf(
  spec: ExperimentSpec,
  keys: readonly string[],
  fallback: (string | number)[],
): (string | number)[] {
  const own = keys.find((k) => k in spec.trainer.overrides);
  return own ? ['trainer', 'overrides', own] : fallback;
}

function batchIssues(spec: ExperimentSpec, o: Map<string, string>): RagenIssue[] {
  const micro = num(valueIn(o, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'));
  const mini = num(valueIn(o, 'actor_rollout_ref.actor.ppo_mini_batch_size'));
  const gpus = num(valueIn(o, 'trainer.n_gpus_per_node'));
  const per = micro * gpus;
  const path = fieldOf(
    spec,
    [
      'actor_rollout_ref.actor.ppo_mini_batch_size',
      'ppo_mini_batch_size',
      'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
      'micro_batch_size_per_gpu',
    ],
    ['trainer', 'nGpusPerNode'],
  );
  const sizes = `ppo_micro_batch_size_per_gpu x n_gpus_per_node = ${micro} x ${gpus} = ${per}, ppo_mini_batch_size = ${mini}`;
  if (per > mini) {
    return [
      {
        rule: 'micro-batch-fits',
        path,
        message: `RAGEN's train.py asserts ppo_micro_batch_size_per_gpu x n_gpus_per_node <= ppo_mini_batch_size (${sizes}); set trainer.overrides.ppo_mini_batch_size to a multiple of ${per}, or use fewer GPUs per node`,
      },
    ];
  }
  if (mini % per !== 0) {
    return [
      {
        rule: 'mini-batch-divisible',
        path,
        message: `RAGEN's train.py asserts ppo_mini_batch_size is divisible by ppo_micro_batch_size_per_gpu x n_gpus_per_node (${sizes}); set trainer.nGpusPerNode to a divisor of ${mini / micro}, or trainer.overrides.ppo_mini_batch_size to a multiple of ${per}`,
      },
    ];
  }
  return [];
}

function cudaIssues(spec: ExperimentSpec, o: Map<string, string>): RagenIssue[] {
  const devices = String(valueIn(o, 'system.CUDA_VISIBLE_DEVICES'));
  const gpus = num(valueIn(o, 'trainer.n_gpus_per_node'));
  const count = devices.split(',').length;
  if (count === gpus) return [];
  return [
    {
      rule: 'cuda-visible-devices',
      path: fieldOf(spec, ['system.CUDA_VISIBLE_DEVICES'], ['trainer', 'nGpusPerNode']),
      message: `RAGEN's train.py asserts that system.CUDA_VISIBLE_DEVICES lists n_gpus_per_node devices, but '${devices}' lists ${count} for n_gpus_per_node=${gpus}; remove trainer.overrides.system.CUDA_VISIBLE_DEVICES (the orchestrator then sets '${cudaVisibleDevices(gpus)}') or list ${gpus} devices`,
    },
  ];
}

function modelIssues(spec: ExperimentSpec, o: Map<string, string>, revision: RagenRevision): RagenIssue[] {
  if (valueIn(o, 'enable_response_mask') === false) return [];
  const message = ragenModelPathIssue(String(valueIn(o, 'model_path')), revision);
  return message
    ? [
        {
          rule: 'model-path',
          path: spec.model ? ['model'] : fieldOf(spec, ['model_path'], ['trainer', 'overrides']),
          message,
        },
      ]
    : [];
}

/** Enough rollouts per step for one mini-batch, after RAGEN's rollout filter keeps its share. */
function filterRatio(o: Map<string, string>, revision: RagenRevision, groups: number): number {
  const filter = revision.rolloutFilter;
  if (filter.kind === 'ratio') return num(valueIn(o, filter.key) ?? filter.default);
  const strategy = String(valueIn(o, 'actor_rollout_ref.rollout.rollout_filter_strategy'));
  const value = num(valueIn(o, 'actor_rollout_ref.rollout.rollout_filter_value'));
  if (strategy === 'top_p' || strategy === 'top_k') return value;
  return strategy === 'top_k_abs' ? value / groups : 1;
}

function envGroupIssues(spec: ExperimentSpec, o: Map<string, string>, revision: RagenRevision): RagenIssue[] {
  const groups = num(valueIn(o, 'es_manager.train.env_groups'));
  const size = num(valueIn(o, 'es_manager.train.group_size'));
  const ratio = filterRatio(o, revision, groups);
  const mode = String(valueIn(o, 'agent_proxy.context_window_mode'));
  const perTurn = mode === 'single_turn' || mode === 'limited_multi_turn';
  const turns = perTurn ? num(valueIn(o, 'agent_proxy.max_turn')) : 1;
  const mini = num(valueIn(o, 'ppo_mini_batch_size'));
  const samples = groups * size * ratio * turns;
  if (samples >= mini) return [];
  const terms = `env_groups x group_size x effective_ratio${perTurn ? ' x max_turn' : ''} = ${groups} x ${size} x ${ratio}${perTurn ? ` x ${turns}` : ''} = ${samples}`;
  return [
    {
      rule: 'env-groups-cover-mini-batch',
      path: fieldOf(
        spec,
        ['es_manager.train.env_groups', 'es_manager.train.group_size', 'ppo_mini_batch_size'],
        ['trainer', 'overrides'],
      ),
      message: `RAGEN's train.py asserts ${terms} >= ppo_mini_batch_size = ${mini}; raise es_manager.train.env_groups or group_size, or lower ppo_mini_batch_size (trainer.overrides)`,
    },
  ];
}

/** RAGEN 5eb79b8: vLLM's tensor parallelism spans the node's GPUs, unless the check is turned off. */
function tensorParallelIssues(
  spec: ExperimentSpec,
  o: Map<string, string>,
  revision: RagenRevision,
): RagenIssue[] {
  if (!revision.tpSizeCheck || valueIn(o, 'actor_rollout_ref.rollout.tp_size_check') === false) return [];
  const tp = num(valueIn(o, 'actor_rollout_ref.rollout.tensor_model_parallel_size'));
  const gpus = num(valueIn(o, 'trainer.n_gpus_per_node'));
  if (tp === gpus) return [];
  return [
    {
      rule: 'tensor-parallel-size',
      path: fieldOf(
        spec,
        ['actor_rollout_ref.rollout.tensor_model_parallel_size'],
        ['trainer', 'nGpusPerNode'],
      ),
      message: `RAGEN ${shortCommit(revision)}'s train.py asserts actor_rollout_ref.rollout.tensor_model_parallel_size (${tp}) equals n_gpus_per_node (${gpus}) while actor_rollout_ref.rollout.tp_size_check is true; set trainer.overrides 'actor_rollout_ref.rollout.tensor_model_parallel_size': ${gpus}, or 'actor_rollout_ref.rollout.tp_size_check': false`,
    },
  ];
}

function ambiguousIssues(spec: ExperimentSpec): RagenIssue[] {
  return Object.entries(spec.trainer.overrides)
    .filter(([, v]) => typeof v === 'string' && isAmbiguousValue(v))
    .map(([key, v]) => ({
      rule: 'hydra-ambiguous-value' as const,
      path: ['trainer', 'overrides', key],
      message: `Hydra reads the unquoted comma in ${key}=${String(v)} as a sweep and refuses it ("Ambiguous value for argument"); quote the value inside the string, e.g. "'${String(v)}'"`,
    }));
}

/** The declared revision's env tags must include the validated one (RAGEN looks it up in custom_envs). */
function revisionIssues(spec: ExperimentSpec): { revision: RagenRevision; issues: RagenIssue[] } {
  const declared = spec.trainer.ragenRevision;
  if (declared === undefined) return { revision: RAGEN_20DAEDC, issues: [] };
  const revision = ragenRevisionOf(declared);
  if (!revision) {
    return {
      revision: RAGEN_20DAEDC,
      issues: [
        {
          rule: 'ragen-revision-known',
          path: ['trainer', 'ragenRevision'],
          message: `${declared} is not a RAGEN revision the orchestrator knows (${KNOWN_RAGEN_REVISIONS.map(shortCommit).join(', ')}); name one of them, or remove trainer.ragenRevision to skip the per-revision checks`,
        },
      ],
    };
  }
  const tag = spec.validation.envTag;
  if (revision.envTags.includes(tag)) return { revision, issues: [] };
  return {
    revision,
    issues: [
      {
        rule: 'env-tag-defined',
        path: ['validation', 'envTag'],
        message: `RAGEN ${shortCommit(revision)} (trainer.ragenRevision) defines no env tag ${tag} in config/envs.yaml; use one of ${revision.envTags.join(', ')}`,
      },
    ],
  };
}

/** Every RAGEN rule the spec's training command would break; empty when RAGEN would start. */
export function ragenPreflightIssues(spec: ExperimentSpec): RagenIssue[] {
  const { revision, issues } = revisionIssues(spec);
  const ambiguous = ambiguousIssues(spec);
  if (ambiguous.length > 0) return [...issues, ...ambiguous]; // RAGEN would not even compose it
  const o = overridesOf(trainArgv(spec, '/checkpoints', { mode: 'disable' }));
  return [
    ...issues,
    ...batchIssues(spec, o),
    ...cudaIssues(spec, o),
    ...modelIssues(spec, o, revision),
    ...envGroupIssues(spec, o, revision),
    ...tensorParallelIssues(spec, o, revision),
  ];
}
