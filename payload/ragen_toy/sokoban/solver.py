"""Bounded breadth-first search over (player, boxes): the shortest solution, or None."""

from __future__ import annotations

from collections import deque

import numpy as np

from .rules import ACTION_VECTORS, ACTIONS, BOXES, PLAYER, TARGET, WALL


def shortest_solution(room_fixed: np.ndarray, room_state: np.ndarray, max_depth: int) -> list[int] | None:
    """Actions (1..4) of a shortest solution with at most `max_depth` actions, else None.

    Uses push/move rules only (no pull), so the answer is exactly what the environment allows.
    """
    rows, cols = room_fixed.shape
    walls = frozenset(zip(*np.nonzero(room_fixed == WALL)))
    targets = frozenset((int(r), int(c)) for r, c in zip(*np.nonzero(room_fixed == TARGET)))
    boxes = frozenset((int(r), int(c)) for r, c in zip(*np.nonzero(np.isin(room_state, BOXES))))
    pr, pc = (int(v) for v in np.argwhere(room_state == PLAYER)[0])
    if boxes <= targets:
        return []

    def blocked(cell: tuple[int, int]) -> bool:
        r, c = cell
        return not (0 <= r < rows and 0 <= c < cols) or cell in walls

    start = ((pr, pc), boxes)
    parents: dict = {start: None}
    frontier = deque([(start, 0)])
    while frontier:
        state, depth = frontier.popleft()
        if depth == max_depth:
            continue
        (r, c), bx = state
        for action in ACTIONS:
            dr, dc = ACTION_VECTORS[action]
            ahead = (r + dr, c + dc)
            if blocked(ahead):
                continue
            new_boxes = bx
            if ahead in bx:
                beyond = (ahead[0] + dr, ahead[1] + dc)
                if blocked(beyond) or beyond in bx:
                    continue
                new_boxes = (bx - {ahead}) | {beyond}
            nxt = (ahead, new_boxes)
            if nxt in parents:
                continue
            parents[nxt] = (state, action)
            if new_boxes <= targets:
                return _unwind(parents, nxt)
            frontier.append((nxt, depth + 1))
    return None


def _unwind(parents: dict, state) -> list[int]:
    actions = []
    while parents[state] is not None:
        state, action = parents[state]
        actions.append(action)
    return actions[::-1]
