"""ragen_toy: a toy RAGEN/verl-compatible Sokoban trainer, validator and all-reduce preflight."""
