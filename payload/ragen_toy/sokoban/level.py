"""A level (initial room) and its canonical hash, used to keep training and validation levels apart."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .rules import BOXES, GRID_LOOKUP, PLAYER, PLAYER_ON_TARGET, TARGET


@dataclass(frozen=True)
class Level:
    room_fixed: np.ndarray  # 0 wall, 1 floor, 2 target
    room_state: np.ndarray  # initial room_state codes 0..5
    seed: int
    solution_length: int  # shortest solution found by BFS

    @property
    def num_boxes(self) -> int:
        return int(np.count_nonzero(np.isin(self.room_state, BOXES)))

    def canonical_hash(self) -> str:
        """Same walls, targets, boxes and player => same hash, whatever seed produced it."""
        digest = hashlib.sha256(b"ragen-toy-sokoban-v1")
        digest.update(np.asarray(self.room_state.shape, dtype=np.int64).tobytes())
        digest.update(self.room_fixed.astype(np.int8).tobytes())
        digest.update(self.room_state.astype(np.int8).tobytes())
        return digest.hexdigest()[:32]


def render_grid(room_state: np.ndarray, room_fixed: np.ndarray) -> str:
    """RAGEN's text grid: player on a target becomes 6 ('S'), one row per line."""
    shown = room_state.copy()
    shown[(room_state == PLAYER) & (room_fixed == TARGET)] = PLAYER_ON_TARGET
    return "\n".join("".join(GRID_LOOKUP[int(v)] for v in row) for row in shown)
