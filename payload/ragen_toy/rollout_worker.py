"""The Ray actor of one GPU slot: plays the training episodes it is handed."""

from __future__ import annotations

import ray

from .agent.episodes import episode_rng, play_training_episode


@ray.remote
class RolloutWorker:
    def __init__(self, slot: int, env_cfg: dict):
        self.slot = slot
        self.env_cfg = env_cfg

    def placement(self) -> dict:
        ctx = ray.get_runtime_context()
        return {"slot": self.slot, "node_id": ctx.get_node_id(), "gpu_ids": [str(g) for g in ray.get_gpu_ids()]}

    def collect(self, tasks: list, weights, epsilon: float, seed_train: int, step: int) -> list:
        """tasks: [(episode_index, level)]. Results keep the index so the learner can order them."""
        out = []
        for episode_index, level in tasks:
            rng = episode_rng(seed_train, step, episode_index)
            batch, result = play_training_episode(level, weights, epsilon, rng, self.env_cfg)
            out.append((episode_index, batch, result))
        return out
