"""One Sokoban episode: gym_sokoban's step rules plus RAGEN's per-trajectory action budget."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .level import Level
from .rules import (
    ACTION_VECTORS,
    BOX,
    BOX_ON_TARGET,
    BOXES,
    EMPTY,
    PENALTY_BOX_OFF_TARGET,
    PENALTY_FOR_STEP,
    PLAYER,
    REWARD_BOX_ON_TARGET,
    REWARD_FINISHED,
    TARGET,
    WALKABLE,
)


@dataclass
class StepResult:
    reward: float
    done: bool
    info: dict = field(default_factory=dict)


class SokobanEnv:
    """Holds the mutable state of one episode on one level.

    `max_steps` is gym_sokoban's env limit (done, not success); `max_actions_per_traj` is RAGEN's
    agent budget: when it runs out before the puzzle is solved the episode is truncated (a failure).
    """

    def __init__(self, level: Level, max_steps: int = 100, max_actions_per_traj: int = 10):
        self.room_fixed = level.room_fixed
        self.room_state = level.room_state.copy()
        self.num_boxes = level.num_boxes
        self.max_steps = max_steps
        self.max_actions_per_traj = max_actions_per_traj
        pos = np.argwhere(self.room_state == PLAYER)[0]
        self.player = (int(pos[0]), int(pos[1]))
        self.num_env_steps = 0
        self.total_reward = 0.0
        self.done = False
        self.success = False
        self.truncated = False

    @property
    def actions_used(self) -> int:
        return self.num_env_steps

    @property
    def actions_left(self) -> int:
        return self.max_actions_per_traj - self.num_env_steps

    def boxes_on_target(self) -> int:
        return int(np.count_nonzero(self.room_state == BOX_ON_TARGET))

    def step(self, action: int) -> StepResult:
        if self.done:
            raise RuntimeError("step() called on a finished episode")
        if action not in ACTION_VECTORS:
            raise ValueError(f"unknown action {action!r}; actions are 1..4 (Up, Down, Left, Right)")
        before_on_target = self.boxes_on_target()
        old_player = self.player
        moved, pushed = self._push_or_move(ACTION_VECTORS[action])
        self.num_env_steps += 1

        reward = PENALTY_FOR_STEP
        after_on_target = self.boxes_on_target()
        if after_on_target > before_on_target:
            reward += REWARD_BOX_ON_TARGET
        elif after_on_target < before_on_target:
            reward += PENALTY_BOX_OFF_TARGET
        solved = after_on_target == self.num_boxes
        if solved:
            reward += REWARD_FINISHED
        self.total_reward += reward

        if solved:
            self.done, self.success = True, True
        elif self.num_env_steps >= self.max_steps:
            self.done = True
        elif self.num_env_steps >= self.max_actions_per_traj:
            self.done, self.truncated = True, True
        info = {
            "action_is_effective": self.player != old_player,
            "action_is_valid": True,
            "pushed_box": pushed,
            "success": solved,
        }
        return StepResult(reward=reward, done=self.done, info=info)

    def _push_or_move(self, vec: tuple[int, int]) -> tuple[bool, bool]:
        """gym_sokoban's _push then _move; returns (player moved, box pushed). There is no pull."""
        rows, cols = self.room_state.shape
        r, c = self.player
        nr, nc = r + vec[0], c + vec[1]
        if not (0 <= nr < rows and 0 <= nc < cols):
            return False, False
        ahead = self.room_state[nr, nc]
        if ahead in BOXES:
            br, bc = nr + vec[0], nc + vec[1]
            if not (0 <= br < rows and 0 <= bc < cols) or self.room_state[br, bc] not in WALKABLE:
                return False, False  # box into a wall or another box: nothing happens
            self.room_state[br, bc] = BOX_ON_TARGET if self.room_fixed[br, bc] == TARGET else BOX
            self._move_player(nr, nc)
            return True, True
        if ahead in WALKABLE:
            self._move_player(nr, nc)
            return True, False
        return False, False

    def _move_player(self, nr: int, nc: int) -> None:
        r, c = self.player
        self.room_state[r, c] = TARGET if self.room_fixed[r, c] == TARGET else EMPTY
        self.room_state[nr, nc] = PLAYER
        self.player = (nr, nc)
