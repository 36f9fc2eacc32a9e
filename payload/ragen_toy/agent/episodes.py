"""Playing episodes: epsilon-greedy for training (returns transitions), greedy or random for validation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sokoban.env import SokobanEnv
from ..sokoban.level import Level
from ..sokoban.rules import ACTIONS
from .features import NUM_FEATURES, action_features
from .q_learning import Batch, greedy_action_index


@dataclass
class EpisodeResult:
    success: bool
    reward: float
    actions: int


def episode_rng(seed_train: int, step: int, episode_index: int) -> np.random.Generator:
    """Exploration randomness depends only on (seed.train, step, episode), never on which worker runs it."""
    return np.random.default_rng(np.random.SeedSequence([int(seed_train), int(step), int(episode_index)]))


def play_training_episode(level: Level, weights, epsilon: float, rng: np.random.Generator, env_cfg: dict):
    env = SokobanEnv(level, max_steps=env_cfg["max_steps"], max_actions_per_traj=env_cfg["max_actions_per_traj"])
    phis, rewards, dones, next_phis = [], [], [], []
    phi_all = action_features(env.room_fixed, env.room_state)
    while not env.done:
        # Draw both numbers every turn so the random stream does not depend on the weights' ties.
        explore, random_index = rng.random() < epsilon, int(rng.integers(len(ACTIONS)))
        index = random_index if explore else greedy_action_index(weights, phi_all)
        result = env.step(ACTIONS[index])
        next_all = np.zeros((len(ACTIONS), NUM_FEATURES)) if env.done else action_features(env.room_fixed, env.room_state)
        phis.append(phi_all[index])
        rewards.append(result.reward)
        dones.append(env.done)
        next_phis.append(next_all)
        phi_all = next_all
    batch = Batch(np.array(phis), np.array(rewards), np.array(dones, bool), np.array(next_phis))
    return batch, EpisodeResult(env.success, env.total_reward, env.actions_used)


def play_evaluation_episode(level: Level, weights, env_cfg: dict, rng: np.random.Generator | None = None) -> EpisodeResult:
    """Greedy with `weights`; with weights None, uniformly random actions drawn from `rng`."""
    env = SokobanEnv(level, max_steps=env_cfg["max_steps"], max_actions_per_traj=env_cfg["max_actions_per_traj"])
    while not env.done:
        if weights is None:
            index = int(rng.integers(len(ACTIONS)))
        else:
            index = greedy_action_index(weights, action_features(env.room_fixed, env.room_state))
        env.step(ACTIONS[index])
    return EpisodeResult(env.success, env.total_reward, env.actions_used)
