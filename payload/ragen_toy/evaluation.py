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


def summarise(records: list[dict], prefix: str = f"val-env/{ENV_TAG}") -> dict:
    n = max(len(records), 1)
    return {
        f"{prefix}/success": sum(r["success"] for r in records) / n,
        f"{prefix}/num_actions": sum(r["actions"] for r in records) / n,
        f"{prefix}/episode_reward": sum(r["reward"] for r in records) / n,
    }
