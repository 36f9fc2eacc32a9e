"""Sokoban cell codes, actions and rewards exactly as RAGEN / gym_sokoban define them (contract §6)."""

# room_state codes. room_fixed uses only WALL, EMPTY (floor) and TARGET.
WALL, EMPTY, TARGET, BOX_ON_TARGET, BOX, PLAYER = 0, 1, 2, 3, 4, 5
# Only the renderer uses 6: a player standing on a target.
PLAYER_ON_TARGET = 6

GRID_LOOKUP = {0: "#", 1: "_", 2: "O", 3: "√", 4: "X", 5: "P", 6: "S"}

# Action ids 1..4 are gym_sokoban's "push up/down/left/right"; (row, col) vectors.
ACTION_NAMES = {1: "Up", 2: "Down", 3: "Left", 4: "Right"}
ACTION_VECTORS = {1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1)}
ACTIONS = (1, 2, 3, 4)

PENALTY_FOR_STEP = -0.1
REWARD_BOX_ON_TARGET = 1.0
PENALTY_BOX_OFF_TARGET = -1.0
REWARD_FINISHED = 10.0

WALKABLE = (EMPTY, TARGET)
BOXES = (BOX, BOX_ON_TARGET)
