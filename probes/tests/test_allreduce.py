"""The all-reduce probe on the real 2-node cluster: exact sums, one rank per GPU node, bounded failures."""

import json
import time

from conftest import run_probe


def result_of(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("ALLREDUCE_RESULT ")]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return json.loads(lines[0][len("ALLREDUCE_RESULT "):])


def test_allreduce_across_two_gpu_nodes(ray_cluster, tmp_path):
    out = tmp_path / "pf" / "result.json"
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "2", "--address", ray_cluster, "--size-mb", "2", "--iters", "3", "--out", str(out)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = result_of(proc)
    assert res["ok"] and res["path"] == "ray-ring-numpy" and "allreduce path: ray-ring-numpy" in proc.stdout
    assert res["world_size"] == 2 and res["bytes"] == 2 * 1024 * 1024 and res["iters"] == 3
    assert len(set(res["nodes"])) == 2 and res["latency_ms"] > 0 and res["bus_bandwidth_gbps"] > 0
    assert json.loads(out.read_text()) == res


def test_world_size_above_the_gpus_fails_within_the_timeout(ray_cluster, tmp_path):
    started = time.monotonic()
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "3", "--address", ray_cluster, "--start-timeout-s", "3"])
    assert proc.returncode == 3 and time.monotonic() - started < 60
    res = result_of(proc)
    assert not res["ok"] and "Total available GPUs 2 is less than total desired GPUs 3" in res["reason"]


def test_a_hanging_rank_becomes_exit_3_with_its_rank(ray_cluster, tmp_path):
    started = time.monotonic()
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "2", "--address", ray_cluster, "--timeout-s", "8", "--simulate-stall-rank", "1",
                                                "--links-timeout-s", "5"])
    assert proc.returncode == 3 and time.monotonic() - started < 60
    res = result_of(proc)
    assert res["reason"].startswith("all-reduce did not finish within 8 s of the actors' start: ranks [1] did not report"), res["reason"]
    # A hung process is not a bad node: the link test runs on fresh actors, so rank 1's node (and
    # rank 0's, whose rank waits on rank 1) answers it and neither is named.
    assert res["links"]["unresponsive"] == [] and res["links"]["suspects"] == [], res["links"]
    assert "slow node(s)" not in res["reason"]


def test_the_budget_counts_from_the_actors_start(ray_cluster, tmp_path):
    # Actors that take 6 s to start (a slow torch import) and a 4 s all-reduce budget: it passes.
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "2", "--address", ray_cluster, "--timeout-s", "4", "--simulate-start-s", "6"])
    res = result_of(proc)
    assert proc.returncode == 0 and res["ok"], res
    assert res["start_s"] >= 6


def test_a_start_beyond_its_budget_is_named(ray_cluster, tmp_path):
    proc = run_probe("ragen_probes.allreduce", ["--world-size", "2", "--address", ray_cluster, "--start-timeout-s", "3", "--simulate-start-s", "8"])
    assert proc.returncode == 3
    assert result_of(proc)["reason"].startswith("the probe's actors did not start within 3 s"), result_of(proc)["reason"]
