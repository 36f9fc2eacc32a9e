"""Linear Q-learning: Q(s, a) = w . phi(s, a), fitted to one-step TD targets with Adam.

Each training step fits the batch of transitions collected by the rollout workers, against targets
computed once with the weights at the start of the step (a frozen target network, as in DQN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import NUM_FEATURES


@dataclass
class AdamState:
    m: np.ndarray
    v: np.ndarray
    t: int

    @classmethod
    def zeros(cls, n: int) -> "AdamState":
        return cls(m=np.zeros(n), v=np.zeros(n), t=0)


@dataclass
class Batch:
    """Transitions: phi of the action taken, reward, done, and phi of all 4 actions in the next state."""

    phi: np.ndarray  # (N, F)
    reward: np.ndarray  # (N,)
    done: np.ndarray  # (N,) bool
    next_phi: np.ndarray  # (N, 4, F); ignored where done

    @classmethod
    def concat(cls, batches: list["Batch"]) -> "Batch":
        if not batches:
            return cls.empty()
        return cls(*(np.concatenate([getattr(b, k) for b in batches]) for k in ("phi", "reward", "done", "next_phi")))

    @classmethod
    def empty(cls) -> "Batch":
        return cls(np.zeros((0, NUM_FEATURES)), np.zeros(0), np.zeros(0, bool), np.zeros((0, 4, NUM_FEATURES)))

    def __len__(self) -> int:
        return len(self.reward)


def initial_weights() -> np.ndarray:
    # Zeros: the untrained greedy policy always picks the first action (Up), i.e. knows nothing.
    return np.zeros(NUM_FEATURES)


def q_values(weights: np.ndarray, phi: np.ndarray) -> np.ndarray:
    return phi @ weights


def greedy_action_index(weights: np.ndarray, phi: np.ndarray) -> int:
    # np.argmax breaks ties by the lowest index: deterministic.
    return int(np.argmax(q_values(weights, phi)))


def td_update(
    weights: np.ndarray,
    adam: AdamState,
    batch: Batch,
    rng: np.random.Generator,
    *,
    lr: float,
    gamma: float,
    epochs: int,
    minibatch_size: int,
) -> tuple[np.ndarray, AdamState, float]:
    """Returns new weights, new Adam state and the mean squared TD error before the update."""
    if len(batch) == 0:
        return weights, adam, 0.0
    next_best = np.max(batch.next_phi @ weights, axis=1)
    targets = batch.reward + gamma * np.where(batch.done, 0.0, next_best)
    td_before = float(np.mean((batch.phi @ weights - targets) ** 2))
    w, m, v, t = weights.copy(), adam.m.copy(), adam.v.copy(), adam.t
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for _ in range(epochs):
        order = rng.permutation(len(batch))
        for start in range(0, len(order), minibatch_size):
            idx = order[start : start + minibatch_size]
            err = batch.phi[idx] @ w - targets[idx]
            grad = batch.phi[idx].T @ err / len(idx)
            t += 1
            m = beta1 * m + (1 - beta1) * grad
            v = beta2 * v + (1 - beta2) * grad**2
            w -= lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return w, AdamState(m=m, v=v, t=t), td_before
