"""The environment follows gym_sokoban/RAGEN's rules (contract §6)."""

import numpy as np
import pytest

from ragen_toy.sokoban.env import SokobanEnv
from ragen_toy.sokoban.level import Level, render_grid
from ragen_toy.sokoban.rules import BOX, BOX_ON_TARGET, EMPTY, PLAYER, TARGET

UP, DOWN, LEFT, RIGHT = 1, 2, 3, 4
CODES = {"#": 0, "_": 1, "O": 2, "√": 3, "X": 4, "P": 5, "S": 5}


def level_from(text: str) -> Level:
    rows = text.strip().splitlines()
    state = np.array([[CODES[ch] for ch in row] for row in rows], dtype=np.int8)
    fixed = np.where(np.isin(state, (0,)), 0, 1).astype(np.int8)
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch in "O√S":
                fixed[r, c] = TARGET
    return Level(room_fixed=fixed, room_state=state, seed=0, solution_length=-1)


def test_render_matches_ragen_example():
    text = "######\n######\n#O####\n#XP###\n#__###\n######"
    assert render_grid(level_from(text).room_state, level_from(text).room_fixed) == text


def test_step_penalty_and_move():
    env = SokobanEnv(level_from("#####\n#P__#\n#X_O#\n#####"))
    res = env.step(RIGHT)
    assert res.reward == pytest.approx(-0.1) and env.player == (1, 2) and res.info["action_is_effective"]


def test_solving_push_scores_10_9_and_ends():
    env = SokobanEnv(level_from("######\n######\n#O####\n#XP###\n#__###\n######"))
    rewards = [env.step(a).reward for a in (DOWN, LEFT, UP)]
    assert rewards == pytest.approx([-0.1, -0.1, 10.9])
    assert env.done and env.success and not env.truncated
    assert env.total_reward == pytest.approx(10.7)


def test_box_onto_target_plus_one_and_off_minus_one():
    # two boxes so pushing one onto a target does not finish the puzzle
    env = SokobanEnv(level_from("#######\n#PXO__#\n#X____#\n#O____#\n#######"))
    assert env.step(RIGHT).reward == pytest.approx(0.9)  # -0.1 + 1
    assert env.room_state[1, 3] == BOX_ON_TARGET
    assert env.step(RIGHT).reward == pytest.approx(-1.1)  # pushed off the target again
    assert env.room_state[1, 4] == BOX and env.room_fixed[1, 3] == TARGET


def test_no_pull():
    env = SokobanEnv(level_from("######\n#_XP_#\n#O___#\n######"))
    env.step(RIGHT)  # walk away from the box
    assert env.room_state[1, 2] == BOX and env.player == (1, 4)


def test_box_into_wall_or_box_is_blocked_but_counts():
    env = SokobanEnv(level_from("#####\n#XP_#\n#O__#\n#####"))
    before = env.room_state.copy()
    res = env.step(LEFT)  # box against the wall
    assert np.array_equal(env.room_state, before) and res.reward == pytest.approx(-0.1)
    assert env.num_env_steps == 1 and not res.info["action_is_effective"]
    env2 = SokobanEnv(level_from("######\n#XXP_#\n#OO__#\n######"))
    before2 = env2.room_state.copy()
    env2.step(LEFT)  # box against a box
    assert np.array_equal(env2.room_state, before2)


def test_player_on_target_renders_S_and_leaves_target():
    env = SokobanEnv(level_from("######\n#PO__#\n#X__O#\n######"))
    env.step(RIGHT)
    assert render_grid(env.room_state, env.room_fixed).splitlines()[1] == "#_S__#"
    env.step(RIGHT)
    assert env.room_state[1, 2] == TARGET and env.room_state[1, 3] == PLAYER


def test_action_budget_truncates_as_failure():
    env = SokobanEnv(level_from("######\n#P___#\n#X__O#\n######"), max_actions_per_traj=3)
    for _ in range(3):
        env.step(UP)
    assert env.done and env.truncated and not env.success
    with pytest.raises(RuntimeError):
        env.step(UP)


def test_max_steps_ends_without_success():
    env = SokobanEnv(level_from("######\n#P___#\n#X__O#\n######"), max_steps=2, max_actions_per_traj=10)
    env.step(UP)
    env.step(UP)
    assert env.done and not env.success and not env.truncated


def test_empty_cell_codes():
    assert EMPTY == 1 and BOX == 4 and PLAYER == 5
