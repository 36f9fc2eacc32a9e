"""Deterministic level generation from an integer seed: random-walk room, reverse play, BFS check.

Every returned level is solvable within `max_actions` (checked by BFS, not assumed). When an attempt
fails the next one uses a seed derived from (seed, attempt), so the result depends only on the inputs.
"""

from __future__ import annotations

import numpy as np

from .level import Level
from .rules import ACTION_VECTORS, BOX, BOX_ON_TARGET, EMPTY, PLAYER, TARGET, WALL
from .solver import shortest_solution

# gym_sokoban's 3x3 carving masks and its direction-change probability.
_MASKS = np.array(
    [
        [[0, 0, 0], [1, 1, 1], [0, 0, 0]],
        [[0, 1, 0], [0, 1, 0], [0, 1, 0]],
        [[0, 0, 0], [1, 1, 0], [0, 1, 0]],
        [[0, 0, 0], [1, 1, 0], [1, 1, 0]],
        [[0, 0, 0], [0, 1, 1], [0, 1, 0]],
    ],
    dtype=np.int8,
)
_P_CHANGE_DIRECTION = 0.35
_MAX_ATTEMPTS = 200


class GenerationError(RuntimeError):
    pass


def generate_level(
    seed: int, dim_x: int = 6, dim_y: int = 6, num_boxes: int = 1, max_actions: int = 10, variant: int = 0
) -> Level:
    """The level for `seed`: rows = dim_x, cols = dim_y (RAGEN's dim_room = (dim_x, dim_y)).

    `variant` > 0 asks for a different level from the same seed (used to skip held-out levels).
    """
    if dim_x < 4 or dim_y < 4:
        raise ValueError("a room needs at least 4 rows and 4 cols (walls all round)")
    for attempt in range(_MAX_ATTEMPTS):
        words = [int(seed), attempt] if variant == 0 else [int(seed), attempt, int(variant)]
        rng = np.random.default_rng(np.random.SeedSequence(words))
        candidate = _try_once(rng, dim_x, dim_y, num_boxes, max_actions)
        if candidate is None:
            continue
        room_fixed, room_state = candidate
        solution = shortest_solution(room_fixed, room_state, max_actions)
        if solution:  # None = not solvable in budget; [] = already solved: both rejected
            return Level(room_fixed=room_fixed, room_state=room_state, seed=int(seed), solution_length=len(solution))
    raise GenerationError(f"no solvable level for seed {seed} after {_MAX_ATTEMPTS} attempts")


def _try_once(rng: np.random.Generator, rows: int, cols: int, num_boxes: int, max_actions: int):
    floor = _random_walk_topology(rng, rows, cols)
    cells = [tuple(int(v) for v in rc) for rc in np.argwhere(floor == 1)]
    if len(cells) < num_boxes + 2:
        return None
    picks = rng.choice(len(cells), size=num_boxes + 1, replace=False)
    targets = [cells[i] for i in picks[:num_boxes]]
    player = cells[picks[-1]]
    room_fixed = floor.copy()
    for t in targets:
        room_fixed[t] = TARGET
    boxes = _reverse_play(rng, room_fixed, set(targets), player, max_actions)
    if boxes is None:
        return None
    box_cells, player = boxes
    room_state = room_fixed.copy()
    for b in box_cells:
        room_state[b] = BOX_ON_TARGET if room_fixed[b] == TARGET else BOX
    room_state[player] = PLAYER
    return room_fixed, room_state


def _random_walk_topology(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    floor = np.zeros((rows, cols), dtype=np.int8)
    directions = [(1, 0), (0, 1), (-1, 0), (0, -1)]
    pos = np.array([rng.integers(1, rows - 1), rng.integers(1, cols - 1)])
    direction = directions[rng.integers(4)]
    for _ in range(int(1.7 * (rows + cols))):
        if rng.random() < _P_CHANGE_DIRECTION:
            direction = directions[rng.integers(4)]
        pos = np.clip(pos + direction, [1, 1], [rows - 2, cols - 2])
        mask = _MASKS[rng.integers(len(_MASKS))]
        r0, c0 = pos[0] - 1, pos[1] - 1
        floor[r0 : r0 + 3, c0 : c0 + 3] |= mask
    floor[0, :] = floor[-1, :] = floor[:, 0] = floor[:, -1] = WALL
    return floor


def _reverse_play(rng, room_fixed, boxes: set, player: tuple, max_actions: int):
    """Pull boxes away from their targets by random reverse moves.

    Like gym_sokoban, keep the visited state whose boxes are farthest from the targets (so levels
    are not mostly one-push puzzles); None if no box ever left its target.
    """
    targets = sorted(boxes)
    best, best_score = None, 0
    n_moves = int(rng.integers(max(2, max_actions // 2), 3 * max_actions + 1))
    for _ in range(n_moves):
        dr, dc = ACTION_VECTORS[int(rng.integers(1, 5))]
        dest = (player[0] + dr, player[1] + dc)
        if room_fixed[dest] == WALL or dest in boxes:
            continue
        behind = (player[0] - dr, player[1] - dc)
        if behind in boxes and rng.random() < 0.8:  # a pull: the box follows the player
            boxes.remove(behind)
            boxes.add(player)
        player = dest
        score = sum(min(abs(b[0] - t[0]) + abs(b[1] - t[1]) for t in targets) for b in boxes)
        if score >= best_score and score > 0:
            best, best_score = (set(boxes), player), score
    return best
