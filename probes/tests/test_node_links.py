"""The per-node link test: the pairing, the scoring, and on a real 4-node Ray cluster a slow node named."""

import math
import socket

from conftest import run_probe
from ragen_probes.node_links import pairs_of, recheck, recheck_peers, score
from test_allreduce import result_of


def test_pairs_are_bounded_by_n_log_n_and_every_node_has_two_peers():
    for n in range(2, 40):
        pairs = pairs_of(n)
        assert len(pairs) == len(set(pairs)) and all(a < b for a, b in pairs)
        assert len(pairs) <= n * math.ceil(math.log2(n))
        peers = {i: {b if a == i else a for a, b in pairs if i in (a, b)} for i in range(n)}
        assert all(len(p) >= min(2, n - 1) for p in peers.values()), (n, peers)


def test_one_slow_node_among_four_is_the_only_suspect():
    # Node 2 is slow: every pair with it runs at its speed; the others have a fast pair each.
    gbps = {p: (0.1 if 2 in p else 1.0) for p in pairs_of(4)}
    scored = score(4, gbps, 0.5)
    assert scored["suspects"] == [2] and scored["median_gbps"] == 1.0 and scored["floor_gbps"] == 0.5


def test_a_uniform_cluster_has_no_suspect_and_two_nodes_name_none():
    assert score(4, {p: 1.0 + 0.1 * p[0] for p in pairs_of(4)}, 0.5)["suspects"] == []
    two = score(2, {(0, 1): 0.01}, 0.5)
    assert two["suspects"] == [] and "two nodes" in two["inconclusive"]


def test_four_healthy_nodes_pass_with_every_link_measured(four_gpu_nodes):
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "4", "--address", four_gpu_nodes, "--size-mb", "1", "--iters", "2"])
    res = result_of(proc)
    assert proc.returncode == 0 and res["ok"], res
    links = res["links"]
    assert len(links["nodes"]) == 4 and len(links["pairs"]) == 6 and links["suspects"] == []
    assert all(d["gbps"] > 0 and d["latency_ms"] > 0 for p in links["pairs"] for d in p["directions"])


def test_a_slow_node_among_four_is_named_with_its_numbers(four_gpu_nodes):
    # Stand-in for a degraded NIC: rank 2's fetches take 0.3 s longer (no real link is slow here).
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "4", "--address", four_gpu_nodes, "--size-mb", "1", "--iters", "2",
                                                "--simulate-slow-rank", "2"])
    res = result_of(proc)
    assert proc.returncode == 5 and not res["ok"], res
    suspects = res["links"]["suspects"]
    assert [s["rank"] for s in suspects] == [2], res["links"]
    s = suspects[0]
    assert s["node_name"] == socket.gethostname()  # no RAGEN_ORCH_NODE_NAME on these nodes: the host's name
    assert res["reason"].startswith(f"slow node(s): node {s['node_name']} ({s['node_ip']}, {s['node_id'][:12]}, rank 2): best link ")
    assert "the median node's best link is" in res["reason"]


def test_a_node_slow_in_one_round_only_is_cleared_by_the_recheck():
    # Round one: node 1's pairs were measured during a busy moment; round two: they run at full speed.
    first = {p: (0.2 if 1 in p else 1.0) for p in pairs_of(4)}
    assert score(4, first, 0.5)["suspects"] == [1]
    again = recheck(4, first, {(0, 1): 0.9, (1, 2): 1.1}, 0.5, [1])
    assert again["suspects"] == [] and again["cleared"] == [1]


def test_a_node_slow_in_both_rounds_stays_suspect_and_the_recheck_is_bounded():
    first = {p: (0.1 if 3 in p else 1.0) for p in pairs_of(8)}
    again = recheck(8, first, {(0, 3): 0.12, (1, 3): 0.09}, 0.5, [3])
    assert again["suspects"] == [3] and again["cleared"] == []
    best = score(8, first, 0.5)["best_gbps"]
    peers = recheck_peers(3, best, [3], set())
    assert len(peers) == 3 and 3 not in peers
    assert recheck_peers(0, [1.0, 0.1, 0.9], [0, 1], set()) == [2]


def test_a_node_that_drops_off_mid_allreduce_is_named(four_gpu_nodes):
    # Rank 2's node drops off for real at its first chunk: the rank kills its node's raylet (object
    # store included). Its fresh link-test actor cannot start there: the node is named unresponsive.
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "4", "--address", four_gpu_nodes, "--size-mb", "1", "--iters", "2",
                                                "--simulate-die-rank", "2", "--timeout-s", "90", "--links-start-timeout-s", "20"])
    res = result_of(proc)
    assert proc.returncode == 1 and not res["ok"], res
    assert res["reason"].startswith("a rank's actor died during the all-reduce"), res["reason"]
    assert [s["rank"] for s in res["links"]["suspects"]] == [2] and res["links"]["unresponsive"] == [2], res["links"]
    assert "rank 2): did not answer (its link-test actor did not start within 20s" in res["reason"]
