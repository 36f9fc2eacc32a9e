"""The trainer's placement on Ray, for the probe: one STRICT_PACK placement group per node of
n_gpus_per_node GPU bundles (verl's resource pool), with every wait bounded.

The probe ships alone to images where only the trainer's own code exists, so it carries these few
lines instead of importing them from any trainer.
"""

from __future__ import annotations

import time

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


class ResourceError(RuntimeError):
    pass


def wait_for_gpus(needed: int, timeout_s: float, shape: str, poll_s: float = 0.5) -> float:
    """Wait until the cluster has at least `needed` GPUs; returns the GPUs seen."""
    deadline = time.monotonic() + timeout_s
    while True:
        total = float(ray.cluster_resources().get("GPU", 0))
        if total >= needed:
            return total
        if time.monotonic() >= deadline:
            raise ResourceError(f"Total available GPUs {total:g} is less than total desired GPUs {needed} ({shape}; waited {timeout_s:g} s)")
        time.sleep(poll_s)


def create_placement_groups(nnodes: int, gpus_per_node: int, cpus_per_slot: float, timeout_s: float) -> list:
    bundle = {"GPU": 1, **({"CPU": cpus_per_slot} if cpus_per_slot > 0 else {})}
    groups = [placement_group([dict(bundle) for _ in range(gpus_per_node)], strategy="STRICT_PACK") for _ in range(nnodes)]
    ready, _ = ray.wait([g.ready() for g in groups], num_returns=len(groups), timeout=timeout_s)
    if len(ready) < len(groups):
        ready_ids = {r.hex() for r in ready}
        pending = [i for i, g in enumerate(groups) if g.ready().hex() not in ready_ids]
        release(groups)
        raise ResourceError(
            f"placement groups not ready within {timeout_s:g} s: node entries {pending} could not get "
            f"{gpus_per_node} GPU bundle(s) on one node (STRICT_PACK); every node needs {gpus_per_node} free GPUs"
        )
    return groups


def slot_options(groups: list, gpus_per_node: int, cpus_per_slot: float) -> list[dict]:
    """Ray actor options for each GPU slot, node-major like verl's ranks."""
    return [
        {"num_gpus": 1, "num_cpus": cpus_per_slot, "scheduling_strategy": PlacementGroupSchedulingStrategy(placement_group=g, placement_group_bundle_index=j)}
        for g in groups
        for j in range(gpus_per_node)
    ]


def release(groups: list) -> None:
    for g in groups:
        try:
            remove_placement_group(g)
        except Exception:  # already gone with the driver's job; nothing to free
            pass
