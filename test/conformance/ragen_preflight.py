"""RAGEN's start-up checks, evaluated on a composed config (the suite's side of the agreement).

train.py's `add_dependency_and_validate_config` (RAGEN 20daedc) asserts these before Ray is
touched; the env-tag and group checks are what RAGEN's env-state manager needs a moment later.
Each check returns the rule ids of src/domain/ragen/ragen-preflight.ts that the config breaks.
"""

from __future__ import annotations


def _effective_ratio(cfg) -> float:
    rollout = cfg.actor_rollout_ref.rollout
    if "rollout_filter_ratio" in rollout:  # RAGEN 5eb79b8: one fixed ratio
        return rollout.rollout_filter_ratio
    strategy = rollout.get("rollout_filter_strategy", "top_p")
    value = rollout.get("rollout_filter_value", 0.25)
    if strategy in ("top_p", "top_k"):
        return value
    if strategy == "top_k_abs":
        return value / cfg.es_manager.train.env_groups
    return 1.0


def batch_rules(cfg) -> set[str]:
    actor = cfg.actor_rollout_ref.actor
    per_step = actor.ppo_micro_batch_size_per_gpu * cfg.trainer.n_gpus_per_node
    if per_step > actor.ppo_mini_batch_size:
        return {"micro-batch-fits"}  # train.py stops at its first failed assert
    if actor.ppo_mini_batch_size % per_step != 0:
        return {"mini-batch-divisible"}
    return set()


def tensor_parallel_rules(cfg) -> set[str]:
    """RAGEN 5eb79b8 only (its config has tp_size_check): TP spans the node's GPUs."""
    rollout = cfg.actor_rollout_ref.rollout
    if not rollout.get("tp_size_check", False):
        return set()
    return set() if rollout.tensor_model_parallel_size == cfg.trainer.n_gpus_per_node else {"tensor-parallel-size"}


def model_path_rules(cfg) -> set[str]:
    path = str(cfg.model_path).lower()
    if not cfg.enable_response_mask or "qwen" in path or "llama-3" in path:
        return set()
    return {"model-path"}


def cuda_rules(cfg) -> set[str]:
    devices = str(cfg.system.CUDA_VISIBLE_DEVICES).split(",")
    return set() if len(devices) == cfg.trainer.n_gpus_per_node else {"cuda-visible-devices"}


def env_group_rules(cfg) -> set[str]:
    train = cfg.es_manager.train
    samples = train.env_groups * train.group_size * _effective_ratio(cfg)
    if cfg.agent_proxy.get("context_window_mode", "full") in ("single_turn", "limited_multi_turn"):
        samples *= cfg.agent_proxy.max_turn
    return set() if samples >= cfg.ppo_mini_batch_size else {"env-groups-cover-mini-batch"}


def env_tag_rules(cfg) -> set[str]:
    known = set(cfg.custom_envs.keys())
    tags = list(cfg.es_manager.train.env_configs.tags) + list(cfg.es_manager.val.env_configs.tags)
    return set() if all(t in known for t in tags) else {"env-tag-defined"}


def group_split_problems(cfg) -> list[str]:
    """One n_groups entry per tag, adding up to env_groups (RAGEN's es_manager asserts it)."""
    problems = []
    for split in ("train", "val"):
        es = cfg.es_manager[split]
        tags, n_groups = list(es.env_configs.tags), es.env_configs.n_groups
        if n_groups is None:
            continue
        if len(n_groups) != len(tags) or sum(n_groups) != es.env_groups:
            problems.append(f"es_manager.{split}: n_groups {list(n_groups)} for tags {tags}, env_groups {es.env_groups}")
    return problems


def broken_rules(cfg) -> set[str]:
    return (
        batch_rules(cfg)
        | model_path_rules(cfg)
        | cuda_rules(cfg)
        | env_group_rules(cfg)
        | env_tag_rules(cfg)
        | tensor_parallel_rules(cfg)
    )
