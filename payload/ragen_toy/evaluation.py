"""Greedy (or random) play on validation levels; shared by the trainer and the validation runner."""

from __future__ import annotations

import numpy as np

from .agent.episodes import play_evaluation_episode
from .config.sokoban_main import ENV_TAG


def evaluate(levels, weights, env_cfg: dict, random_seed: int | None = None) -> list[dict]:
    """One record per level. weights None = uniform random policy seeded by random_seed."""
    rng = np.random.default_rng(np.random.SeedSequence([int(random_seed or 0), 0x5A])) if weights is None else None
    records = []
    for level in levels:
        result = play_evaluation_episode(level, weights, env_cfg, rng)
        records.append({"seed": level.seed, "success": bool(result.success), "reward": round(result.reward, 6), "actions": result.actions})
    return records


def summarise(records: list[dict], prefix: str = f"val-env/{ENV_TAG}", group_size: int = 1) -> dict:
    """RAGEN's per-tag validation metrics; records come group by group, group_size each (one level per group)."""
    n = max(len(records), 1)
    groups = [records[i:i + group_size] for i in range(0, len(records), group_size)]
    return {
        f"{prefix}/success": sum(r["success"] for r in records) / n,
        f"{prefix}/num_actions": sum(r["actions"] for r in records) / n,
        f"{prefix}/episode_reward": sum(r["reward"] for r in records) / n,
        # pass@k with k = group_size: a group counts when any of its episodes succeeded.
        f"{prefix}/pass@{group_size}": sum(any(r["success"] for r in g) for g in groups) / max(len(groups), 1),
    }
