"""Which levels train and which validate, and the rule that keeps the two sets apart.

Validation levels: seed.val + i. Training group g of step t uses seed.train + counter + g, and the
counter advances by env_groups each step (RAGEN's seed_counter). Seeds alone do not guarantee
disjoint *levels* (different seeds can generate the same room), so the rule is checked by content:
a training level whose canonical hash is among the first seed.val_holdout validation levels is
replaced by the level of the next variant of the same seed, until it is not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .sokoban.generate import generate_level
from .sokoban.level import Level


def env_kwargs(cfg: dict) -> dict:
    return {
        "dim_x": cfg["env.dim_x"],
        "dim_y": cfg["env.dim_y"],
        "num_boxes": cfg["env.num_boxes"],
        "max_actions": cfg["env.max_actions_per_traj"],
    }


def validation_levels(seed_val: int, count: int, gen_kwargs: dict) -> list[Level]:
    return [generate_level(seed_val + i, **gen_kwargs) for i in range(count)]


def level_set_digest(levels: list[Level]) -> str:
    """One hash for an ordered list of levels: lets a manifest prove which levels were used."""
    digest = hashlib.sha256()
    for level in levels:
        digest.update(level.canonical_hash().encode())
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class Holdout:
    seed_val: int
    count: int
    hashes: frozenset
    digest: str

    @classmethod
    def build(cls, seed_val: int, count: int, gen_kwargs: dict) -> "Holdout":
        levels = validation_levels(seed_val, count, gen_kwargs)
        return cls(seed_val, count, frozenset(l.canonical_hash() for l in levels), level_set_digest(levels))

    def covers(self, seed_val: int, episodes: int) -> bool:
        return seed_val == self.seed_val and episodes <= self.count


_MAX_VARIANTS = 1000


def training_level(seed: int, holdout: Holdout, gen_kwargs: dict) -> tuple[Level, int]:
    """The training level for `seed` and how many held-out collisions were skipped to get it."""
    for variant in range(_MAX_VARIANTS):
        level = generate_level(seed, variant=variant, **gen_kwargs)
        if level.canonical_hash() not in holdout.hashes:
            return level, variant
    raise RuntimeError(f"training seed {seed}: every variant collides with the validation holdout")
