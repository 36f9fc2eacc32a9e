"""One rank of the all-reduce probe: a Ray actor on one GPU slot.

Buffers hold small integers in float32, so the reduced sum is exact and can be checked with ==.
"""

from __future__ import annotations

import socket
import time

import numpy as np
import ray

from . import gpu_health
from .link_end import kill_own_node, node_name


def rank_values(rank: int, n_elements: int, iteration: int) -> np.ndarray:
    return (((np.arange(n_elements) + iteration) % 1024) + rank).astype(np.float32)


def expected_sum(world_size: int, n_elements: int, iteration: int) -> np.ndarray:
    base = ((np.arange(n_elements) + iteration) % 1024).astype(np.float64)
    return (world_size * base + world_size * (world_size - 1) / 2).astype(np.float32)


def chunk_bounds(n_elements: int, world_size: int) -> list[tuple[int, int]]:
    edges = np.linspace(0, n_elements, world_size + 1).astype(int)
    return [(int(edges[i]), int(edges[i + 1])) for i in range(world_size)]



@ray.remote
class AllReduceRank:
    def __init__(self, rank: int, world_size: int, n_elements: int, stall: bool = False, die: bool = False):
        self.stall = stall  # test hook only: this rank never finishes its first chunk (a hung process)
        self.die = die  # test hook only: this rank's node drops off at its first chunk (its raylet killed)
        self.rank, self.world_size, self.n = rank, world_size, n_elements
        self.bounds = chunk_bounds(n_elements, world_size)
        self.buf = np.zeros(n_elements, dtype=np.float32)
        self.iteration = 0

    def probe(self, simulate_start_s: float = 0.0) -> dict:
        if simulate_start_s:
            time.sleep(simulate_start_s)  # test hook: a slow start (torch import on a cold image)
        ctx = ray.get_runtime_context()
        info = {"rank": self.rank, "node_id": ctx.get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "node_name": node_name(),
                "gpu_ids": [str(g) for g in ray.get_gpu_ids()], "torch": False, "cuda": False,
                "gpu_health": gpu_health.nvidia_smi()}
        try:
            import torch  # optional: only the torch.distributed paths need it

            info["torch"] = True
            info["cuda"] = bool(torch.cuda.is_available())
        except Exception:
            pass
        return info

    def free_port(self) -> int:
        with socket.socket() as s:
            s.bind(("", 0))
            return s.getsockname()[1]

    # --- ray-ring-numpy: reduce-scatter then all-gather, chunks passed as object refs ------------
    def fill(self, iteration: int) -> bool:
        self.iteration = iteration
        self.buf = rank_values(self.rank, self.n, iteration)
        return True

    def get_chunk(self, index: int) -> np.ndarray:
        lo, hi = self.bounds[index]
        return self.buf[lo:hi].copy()

    def add_chunk(self, index: int, data: np.ndarray) -> bool:
        if self.stall:
            time.sleep(3600)
        if self.die:
            kill_own_node()
        lo, hi = self.bounds[index]
        self.buf[lo:hi] += data
        return True

    def set_chunk(self, index: int, data: np.ndarray) -> bool:
        lo, hi = self.bounds[index]
        self.buf[lo:hi] = data
        return True

    def verify(self) -> int:
        """Number of elements that differ from the exact sum (0 = correct)."""
        return int(np.count_nonzero(self.buf != expected_sum(self.world_size, self.n, self.iteration)))

    # --- torch.distributed (nccl on CUDA, gloo on CPU) --------------------------------------
    def torch_init(self, backend: str, master: str, timeout_s: float) -> bool:
        import datetime

        import torch
        import torch.distributed as dist

        if backend == "nccl":
            torch.cuda.set_device(0)  # Ray sets CUDA_VISIBLE_DEVICES to this actor's GPU
        dist.init_process_group(backend, init_method=f"tcp://{master}", rank=self.rank, world_size=self.world_size,
                                timeout=datetime.timedelta(seconds=timeout_s))
        return True

    def torch_run(self, backend: str, iters: int) -> dict:
        import torch
        import torch.distributed as dist

        device = "cuda" if backend == "nccl" else "cpu"
        latencies, mismatches = [], 0
        for iteration in range(iters + 1):  # iteration 0 is a warm-up, not timed
            t = torch.from_numpy(rank_values(self.rank, self.n, iteration)).to(device)
            dist.barrier()
            if device == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
            dist.all_reduce(t)
            if device == "cuda":
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - started
            got = t.cpu().numpy()
            mismatches += int(np.count_nonzero(got != expected_sum(self.world_size, self.n, iteration)))
            if iteration > 0:
                latencies.append(elapsed)
        dist.destroy_process_group()
        return {"latencies": latencies, "mismatches": mismatches}
