"""The sweep spec's distributions (src/domain/sweep/sweep.ts DistributionSchema) as Optuna distributions."""

from __future__ import annotations

from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)


def distribution(spec: dict[str, Any]) -> BaseDistribution:
    """One parameter: `choice`, `uniform`, `logUniform` or `intRange` (validated at load by the TS side)."""
    if "choice" in spec:
        return CategoricalDistribution(spec["choice"])
    if "uniform" in spec:
        low, high = spec["uniform"]
        return FloatDistribution(low, high)
    if "logUniform" in spec:
        low, high = spec["logUniform"]
        return FloatDistribution(low, high, log=True)
    if "intRange" in spec:
        low, high = spec["intRange"]
        return IntDistribution(low, high)
    raise ValueError(f"unknown parameter type {sorted(spec)}: use choice, uniform, logUniform or intRange")


def distributions(space: dict[str, dict[str, Any]]) -> dict[str, BaseDistribution]:
    """Keys sorted: the same space names its parameters in the same order everywhere."""
    return {key: distribution(space[key]) for key in sorted(space)}
