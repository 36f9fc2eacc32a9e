"""The environment probe and the all-reduce as one Ray job (join_checks.py) on the real 3-node
cluster: both result lines from one driver; an unmet contract stops it before the all-reduce."""

import json

from conftest import run_probe


def lines_of(proc, kind):
    return [json.loads(l[len(kind) + 8:]) for l in proc.stdout.splitlines() if l.startswith(f"{kind}_RESULT ")]


def environment_args(tmp_path, requires="numpy,ray"):
    return ["--address", "auto", "--checkpoint-dir", str(tmp_path / "ckpt"), "--requires", requires]


def test_both_checks_on_one_connection(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster)
    proc = run_probe("ragen_probes.join_checks", [
        *environment_args(tmp_path), "--then-allreduce",
        "--world-size", "2", "--address", "auto", "--size-mb", "1", "--iters", "2",
    ])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [env] = lines_of(proc, "ENVIRONMENT")
    [allreduce] = lines_of(proc, "ALLREDUCE")
    assert env["ok"] and len(env["nodes"]) == 3
    assert allreduce["ok"] and allreduce["world_size"] == 2 and allreduce["path"] == "ray-ring-numpy"


def test_an_unmet_contract_stops_before_the_all_reduce(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster)
    proc = run_probe("ragen_probes.join_checks", [
        *environment_args(tmp_path, "numpy,no_such_module_xyz"), "--then-allreduce",
        "--world-size", "2", "--address", "auto",
    ])
    assert proc.returncode == 5, proc.stdout[-3000:] + proc.stderr[-3000:]
    [env] = lines_of(proc, "ENVIRONMENT")
    assert not env["ok"] and env["failures"][0]["item"] == "module:no_such_module_xyz"
    assert lines_of(proc, "ALLREDUCE") == []


def test_without_the_separator_exit_2():
    proc = run_probe("ragen_probes.join_checks", ["--checkpoint-dir", "/tmp/x"])
    assert proc.returncode == 2 and "--then-allreduce" in proc.stderr
