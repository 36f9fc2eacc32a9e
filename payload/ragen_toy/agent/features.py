"""Per-action features for a linear Q-function: what would each action do to the room?

The features are relative (distances, flags), so one small weight vector generalises across levels.
They describe consequences only; which consequences are good is what training has to learn.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

import numpy as np

from ..sokoban.rules import ACTION_VECTORS, ACTIONS, BOX, BOX_ON_TARGET, BOXES, PLAYER, TARGET, WALKABLE, WALL

FEATURE_NAMES = (
    "bias",
    "blocked",  # the action changed nothing
    "pushed_box",
    "delta_box_distance",  # change in pushes still needed (sum over boxes)
    "delta_player_distance",  # change in walking distance to a useful push position
    "dead_box",  # a box off target can no longer reach any target
    "box_onto_target",
    "box_off_target",
    "solved",
)
NUM_FEATURES = len(FEATURE_NAMES)
_FAR = 12  # stand-in distance for "unreachable", keeps features bounded


def action_features(room_fixed: np.ndarray, room_state: np.ndarray) -> np.ndarray:
    """Array of shape (4, NUM_FEATURES): row i describes action ACTIONS[i] from this room_state."""
    push_dist = _push_distance(room_fixed.astype(np.int8).tobytes(), room_fixed.shape)
    before = _summary(room_fixed, room_state, push_dist)
    rows = np.zeros((len(ACTIONS), NUM_FEATURES))
    for i, action in enumerate(ACTIONS):
        after_state, moved, pushed = _simulate(room_fixed, room_state, ACTION_VECTORS[action])
        after = before if not moved else _summary(room_fixed, after_state, push_dist)
        rows[i] = (
            1.0,
            0.0 if moved else 1.0,
            1.0 if pushed else 0.0,
            (after["box_distance"] - before["box_distance"]) / 2.0,
            (after["player_distance"] - before["player_distance"]) / 2.0,
            1.0 if after["dead"] else 0.0,
            1.0 if after["on_target"] > before["on_target"] else 0.0,
            1.0 if after["on_target"] < before["on_target"] else 0.0,
            1.0 if after["solved"] else 0.0,
        )
    return rows


def _simulate(room_fixed, room_state, vec):
    """The room after one push-or-move (same rules as SokobanEnv), without mutating the input."""
    rows, cols = room_state.shape
    r, c = (int(v) for v in np.argwhere(room_state == PLAYER)[0])
    nr, nc = r + vec[0], c + vec[1]
    if not (0 <= nr < rows and 0 <= nc < cols):
        return room_state, False, False
    ahead = room_state[nr, nc]
    pushed = False
    if ahead in BOXES:
        br, bc = nr + vec[0], nc + vec[1]
        if not (0 <= br < rows and 0 <= bc < cols) or room_state[br, bc] not in WALKABLE:
            return room_state, False, False
        pushed = True
    elif ahead not in WALKABLE:
        return room_state, False, False
    out = room_state.copy()
    if pushed:
        out[br, bc] = BOX_ON_TARGET if room_fixed[br, bc] == TARGET else BOX
    out[r, c] = room_fixed[r, c]
    out[nr, nc] = PLAYER
    return out, True, pushed


def _summary(room_fixed, room_state, push_dist):
    boxes = [tuple(int(v) for v in rc) for rc in np.argwhere(np.isin(room_state, BOXES))]
    off = [b for b in boxes if room_fixed[b] != TARGET]
    dists = [push_dist[b] for b in off]
    dead = any(d >= _FAR for d in dists)
    return {
        "box_distance": float(sum(min(d, _FAR) for d in dists)),
        "player_distance": float(_player_distance(room_fixed, room_state, off, push_dist)) if off else 0.0,
        "dead": dead,
        "on_target": len(boxes) - len(off),
        "solved": not off,
    }


def _player_distance(room_fixed, room_state, off_boxes, push_dist) -> int:
    """Walking steps from the player to a cell from which some box can be pushed closer to a target."""
    rows, cols = room_state.shape
    goals = set()
    for b in off_boxes:
        for dr, dc in ACTION_VECTORS.values():
            dest, stand = (b[0] + dr, b[1] + dc), (b[0] - dr, b[1] - dc)
            if push_dist[dest] < push_dist[b] and room_state[dest] in WALKABLE and room_state[stand] in (*WALKABLE, PLAYER):
                goals.add(stand)
    if not goals:
        return _FAR
    start = tuple(int(v) for v in np.argwhere(room_state == PLAYER)[0])
    seen, frontier = {start}, deque([(start, 0)])
    while frontier:
        cell, dist = frontier.popleft()
        if cell in goals:
            return dist
        for dr, dc in ACTION_VECTORS.values():
            nxt = (cell[0] + dr, cell[1] + dc)
            if 0 <= nxt[0] < rows and 0 <= nxt[1] < cols and nxt not in seen and room_state[nxt] in WALKABLE:
                seen.add(nxt)
                frontier.append((nxt, dist + 1))
    return _FAR


@lru_cache(maxsize=4096)
def _push_distance(fixed_bytes: bytes, shape: tuple[int, int]) -> np.ndarray:
    """Fewest pushes that bring a lone box from each cell to some target (walls only; _FAR = never)."""
    room_fixed = np.frombuffer(fixed_bytes, dtype=np.int8).reshape(shape)
    rows, cols = shape
    dist = np.full(shape, _FAR, dtype=np.int64)
    frontier = deque()
    for r, c in np.argwhere(room_fixed == TARGET):
        dist[r, c] = 0
        frontier.append((int(r), int(c)))

    def floor(r, c):
        return 0 <= r < rows and 0 <= c < cols and room_fixed[r, c] != WALL

    while frontier:
        r, c = frontier.popleft()
        for dr, dc in ACTION_VECTORS.values():
            # a box at (r-dr, c-dc) pushed by a player standing at (r-2dr, c-2dc) lands on (r, c)
            pr, pc = r - dr, c - dc
            if floor(pr, pc) and floor(pr - dr, pc - dc) and dist[pr, pc] > dist[r, c] + 1:
                dist[pr, pc] = dist[r, c] + 1
                frontier.append((pr, pc))
    dist.setflags(write=False)
    return dist
