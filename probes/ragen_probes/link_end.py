"""One end of the per-node link test: a fresh zero-resource actor pinned to one node.

Fresh, not the all-reduce's rank actors: after an all-reduce that hung, a healthy node's rank is
still blocked waiting for the bad node's data (an actor's calls run in order), so measuring through
it would name the healthy node too. Zero resources: it starts beside the ranks on a node whose GPUs
they hold. Pinned (hard node affinity): a node that is gone or cut off never starts it, and that
is the finding.
"""

from __future__ import annotations

import os
import signal
import socket
import time

import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

# The machine a node runs on, as the platform names it: set by the orchestrator (KubeRay: the Pod's
# spec.nodeName; local: the node's slot), else the host name. Suspects are recorded under it.
NODE_NAME_ENV = "RAGEN_ORCH_NODE_NAME"
# Stand-in for a degraded NIC (tests only): a node whose environment has it fetches this much slower.
STANDIN_SLOW_PULL_ENV = "RAGEN_ORCH_STANDIN_SLOW_PULL_S"


# Threaded: a ping is answered while a fetch from a peer that was cut off hangs (node_links.py).
@ray.remote(num_cpus=0, max_concurrency=4)
class LinkEnd:
    def __init__(self, index: int, slow_pull_s: float = 0.0):
        self.index = index
        # Test hook only: this node's fetches take this much longer, by argument or from the node's
        # environment (a local node the orchestrator's tests mark slow).
        self.slow_pull_s = slow_pull_s or float(os.environ.get(STANDIN_SLOW_PULL_ENV, "0") or 0)

    def ping(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def blob(self, nbytes: int) -> np.ndarray:
        """An object made in this node's object store, for a peer to fetch."""
        return np.full(max(1, nbytes // 4), self.index, dtype=np.float32)

    def pull(self, refs: list) -> float:
        """Seconds to fetch a peer's object to this node (passed in a list, so the fetch is timed here)."""
        started = time.perf_counter()
        data = ray.get(refs[0])
        if self.slow_pull_s:
            time.sleep(self.slow_pull_s)
        seconds = time.perf_counter() - started
        del data
        return seconds


def start(node_ids: list[str], timeout_s: float, slow_index: int | None = None) -> tuple[list, set[int]]:
    """One LinkEnd per node, and the indices of the nodes whose end did not answer within timeout_s
    (the node is gone, cut off, or its raylet cannot start a worker)."""
    ends = [LinkEnd.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))
            .remote(i, 0.3 if i == slow_index else 0.0) for i, node_id in enumerate(node_ids)]
    pings = [end.ping.remote() for end in ends]
    ready, _ = ray.wait(pings, num_returns=len(pings), timeout=timeout_s)
    silent = {i for i, ping in enumerate(pings) if ping not in ready}
    for i, ping in enumerate(pings):
        if i not in silent:
            try:
                ray.get(ping)
            except ray.exceptions.RayError:  # unschedulable (the node is dead) or its worker died
                silent.add(i)
    return ends, silent


def node_name() -> str:
    return os.environ.get(NODE_NAME_ENV) or socket.gethostname()


def kill_own_node() -> None:
    """Test hook: the node this process runs on drops off, for real. A Ray worker's parent is its
    node's raylet (object store included); killing it takes the node's workers with it."""
    os.kill(os.getppid(), signal.SIGKILL)
    os._exit(1)
