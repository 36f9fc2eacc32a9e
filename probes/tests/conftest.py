"""One real multi-node Ray cluster for the session (head 0 GPUs, two nodes with 1 logical GPU each).

The probe runs as `python -m ragen_probes.allreduce` from the probes/ directory: Ray adds the
driver's working directory to its workers' sys.path, so the ranks import the package the same way
they do when it arrives as a runtime_env py_modules package.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("RAY_DEDUP_LOGS", "0")

PROBES_DIR = Path(__file__).resolve().parents[1]
# Unit tests import the package in-process, whatever folder pytest was started from.
if str(PROBES_DIR) not in sys.path:
    sys.path.insert(0, str(PROBES_DIR))


# A loopback address other than 127.0.0.1 (which Ray rewrites to the host's address) keeps
# every node and connection of the test cluster on loopback.
NODE_IP = "127.0.0.2"


@pytest.fixture(scope="session")
def ray_test_cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0, "node_ip_address": NODE_IP})
    try:
        cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=NODE_IP)
        cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=NODE_IP)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="session")
def ray_cluster(ray_test_cluster):
    return ray_test_cluster.address


@pytest.fixture
def four_gpu_nodes(ray_test_cluster):
    """The session cluster with two more 1-GPU nodes for one test (removed after it). A node the
    test killed (its raylet gone) is removed too and, if it was one of the session's, replaced."""
    cluster = ray_test_cluster
    added = [cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=NODE_IP) for _ in range(2)]
    try:
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        lost = [n for n in cluster.worker_nodes if n not in added and _raylet_dead(n)]
        for node in added + lost:
            cluster.remove_node(node)
        for _ in lost:
            cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=NODE_IP)
        cluster.wait_for_nodes(timeout=120)  # a killed node counts as live until Ray's health check fails it


def _raylet_dead(node) -> bool:
    return node.all_processes["raylet"][0].process.poll() is not None


def run_probe(module: str, args: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout, cwd=PROBES_DIR)
