"""verl's resource pool on Ray: one placement group per node, n_gpus_per_node bundles, STRICT_PACK.

Unlike verl, every wait is bounded: a GPU shortfall or a placement that cannot be met fails with a
message instead of hanging.
"""

from __future__ import annotations

import time

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


class ResourceError(RuntimeError):
    pass


def connect(ray_init_kwargs: dict) -> None:
    """ray.init with the config's ray_kwargs.ray_init (address=auto attaches or fails, never starts one)."""
    print(f"ray init kwargs: {ray_init_kwargs}", flush=True)
    if not ray.is_initialized():
        ray.init(**ray_init_kwargs)


def wait_for_gpus(nnodes: int, n_gpus_per_node: int, timeout_s: float, poll_s: float = 0.5, shape: str | None = None) -> float:
    """Wait until the cluster has at least nnodes x n_gpus_per_node GPUs; returns the GPUs seen."""
    shape = shape or f"trainer.nnodes={nnodes} x trainer.n_gpus_per_node={n_gpus_per_node}"
    needed = nnodes * n_gpus_per_node
    deadline = time.monotonic() + timeout_s
    while True:
        total = float(ray.cluster_resources().get("GPU", 0))
        if total >= needed:
            return total
        if time.monotonic() >= deadline:
            raise ResourceError(
                f"Total available GPUs {total:g} is less than total desired GPUs {needed} "
                f"({shape}; waited {timeout_s:g} s)"
            )
        time.sleep(poll_s)


def create_placement_groups(nnodes: int, n_gpus_per_node: int, cpus_per_slot: float, timeout_s: float) -> list:
    bundle = {"GPU": 1}
    if cpus_per_slot > 0:
        bundle["CPU"] = cpus_per_slot
    groups = [placement_group([dict(bundle) for _ in range(n_gpus_per_node)], strategy="STRICT_PACK") for _ in range(nnodes)]
    ready, _ = ray.wait([g.ready() for g in groups], num_returns=len(groups), timeout=timeout_s)
    if len(ready) < len(groups):
        ready_ids = {r.hex() for r in ready}
        pending = [i for i, g in enumerate(groups) if g.ready().hex() not in ready_ids]
        for g in groups:
            remove_placement_group(g)
        raise ResourceError(
            f"placement groups not ready within {timeout_s:g} s: node entries {pending} could not get "
            f"{n_gpus_per_node} GPU bundle(s) on one node (STRICT_PACK); every node needs "
            f"{n_gpus_per_node} free GPUs"
        )
    return groups


def slot_options(groups: list, n_gpus_per_node: int, cpus_per_slot: float) -> list[dict]:
    """Ray actor options for each GPU slot, in slot order (node-major, like verl's ranks)."""
    return [
        {
            "num_gpus": 1,
            "num_cpus": cpus_per_slot,
            "scheduling_strategy": PlacementGroupSchedulingStrategy(placement_group=g, placement_group_bundle_index=j),
        }
        for g in groups
        for j in range(n_gpus_per_node)
    ]


def release(groups: list) -> None:
    for g in groups:
        try:
            remove_placement_group(g)
        except Exception:  # already gone with the driver's job; nothing to free
            pass
