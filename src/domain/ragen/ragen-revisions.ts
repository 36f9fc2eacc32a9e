/**
 * What the product knows about each RAGEN revision an image may carry (`trainer.ragenRevision`).
 * The values are facts read from RAGEN's `config/` and `train.py` at that commit; the conformance
 * suite (test/conformance) checks the 20daedc entry against the real configuration.
 */
export interface RagenRevision {
  commit: string;
  /** verl as RAGEN's submodule pins it. */
  verl: string;
  /** The env tags of `config/envs.yaml` (`custom_envs`): validation can only name one of these. */
  envTags: readonly string[];
  /** train.py's model_path assertion: the lowercased path must contain one of these. */
  modelPathMarkers: readonly string[];
  /**
   * The share of rollouts RAGEN's filter keeps, for the env-groups rule: by
   * `rollout_filter_strategy`/`rollout_filter_value` (20daedc), or one `rollout_filter_ratio` key.
   */
  rolloutFilter: { kind: 'strategy' } | { kind: 'ratio'; key: string; default: number };
  /** train.py asserts tensor_model_parallel_size == n_gpus_per_node unless tp_size_check is false. */
  tpSizeCheck: boolean;
}

/** mll-lab-nu/RAGEN HEAD (2026-04-14), verl 0.6.1: the revision the product's argv is built for. */
export const RAGEN_20DAEDC: RagenRevision = {
  commit: '20daedc47558e000f7de912b060646bf2e8026bd',
  verl: '0.6.1 (d62da49)',
  envTags: [
    'SimpleSokoban',
    'LargerSokoban',
    'SokobanDifferentGridVocab',
    'CoordSokoban',
    'VisualSimpleSokoban',
    'Alfworld',
    'AlfworldOOD',
    'Countdown',
    'Bandit',
    'BanditTest',
    'DeepCoder',
    'FrozenLake',
    'CoordFrozenLake',
    'MetamathQA',
    'WebShopFull',
    'WebShop',
    'Lean',
    'SimpleSudoku',
    'MediumSudoku',
    'SearchQA',
    'SearchQAMock',
    'game_2048',
    'rubikscube',
  ],
  modelPathMarkers: ['qwen', 'llama-3'],
  rolloutFilter: { kind: 'strategy' },
  tpSizeCheck: false,
};

/**
 * RAGEN-AI/RAGEN HEAD (2025-09-06), verl 0.2.0.dev: no CoordSokoban, a qwen-only response mask, a
 * fixed filter ratio (0.25), and tensor parallelism over all of a node's GPUs unless tp_size_check
 * is turned off.
 */
export const RAGEN_5EB79B8: RagenRevision = {
  commit: '5eb79b82cecc31db5662ba3c96b752405692410b',
  verl: '0.2.0.dev (1e47e41)',
  envTags: [
    'SimpleSokoban',
    'LargerSokoban',
    'SokobanDifferentGridVocab',
    'VisualSimpleSokoban',
    'Countdown',
    'Bandit',
    'BanditTest',
    'FrozenLake',
    'MetamathQA',
    'WebShop',
  ],
  modelPathMarkers: ['qwen'],
  rolloutFilter: { kind: 'ratio', key: 'actor_rollout_ref.rollout.rollout_filter_ratio', default: 0.25 },
  tpSizeCheck: true,
};

export const KNOWN_RAGEN_REVISIONS: readonly RagenRevision[] = [RAGEN_20DAEDC, RAGEN_5EB79B8];

/** The revision a spec names (7 to 40 hex digits, a prefix of the full commit); undefined if unknown. */
export function ragenRevisionOf(revision: string): RagenRevision | undefined {
  const rev = revision.toLowerCase();
  return KNOWN_RAGEN_REVISIONS.find((r) => r.commit.startsWith(rev));
}

export const shortCommit = (r: RagenRevision): string => r.commit.slice(0, 7);
