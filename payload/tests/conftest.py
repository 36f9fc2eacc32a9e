"""One real multi-node Ray cluster for the whole session: a head with 0 GPUs, two nodes with 1 GPU each."""

import os
import subprocess
import sys

import pytest

os.environ.setdefault("RAY_DEDUP_LOGS", "0")


@pytest.fixture(scope="session")
def ray_cluster():
    from ray.cluster_utils import Cluster

    # A loopback address other than 127.0.0.1 (which Ray rewrites to the host's address) keeps
    # every node and connection of the test cluster on loopback.
    ip = "127.0.0.2"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0, "node_ip_address": ip})
    try:
        cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=ip)
        cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=ip)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()


def run_module(module: str, args: list[str], cwd, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def train(address: str, cwd, *overrides: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return run_module("ragen_toy.train", ["--config-name", "_2_sokoban", f"+ray_kwargs.ray_init.address={address}", *overrides], cwd, timeout)
