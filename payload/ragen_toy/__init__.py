"""ragen_toy: a toy RAGEN/verl-compatible Sokoban trainer and validator."""
