"""The environment probe on the real 3-node cluster (head + 2 nodes with 1 logical GPU each): every node
answers, every failed item is listed once with the nodes it failed on."""

import json
import sys
import time

from conftest import run_probe
from model_dir import write_model_dir


def result_of(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("ENVIRONMENT_RESULT ")]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return json.loads(lines[0][len("ENVIRONMENT_RESULT "):])


def test_every_node_meets_the_contract(ray_cluster, tmp_path):
    model = write_model_dir(tmp_path)
    out = tmp_path / "env.json"
    started = time.monotonic()
    proc = run_probe("ragen_probes.environment", [
        "--address", ray_cluster, "--checkpoint-dir", str(tmp_path / "ckpt"), "--requires", "numpy,ray",
        "--model-path", str(model), "--python", f"{sys.version_info[0]}.{sys.version_info[1]}",
        "--entrypoint-json", json.dumps(["python", "-m", "ragen_probes.allreduce"]), "--out", str(out),
    ])
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = result_of(proc)
    assert res["ok"] and res["failures"] == [] and json.loads(out.read_text()) == res
    assert len(res["nodes"]) == 3 and sum(n["node"].startswith("head ") for n in res["nodes"]) == 1
    revisions = {n["model"]["revision"] for n in res["nodes"]}
    assert len(revisions) == 1 and revisions.pop().startswith("sha256:")
    for node in res["nodes"]:
        assert node["modules"]["numpy"]["ok"] and node["modules"]["ray"]["version"]
        assert node["checkpoint"]["writable"] and node["checkpoint"]["free_bytes"] > 0
    print(f"environment probe wall time: {res['wall_s']} s inside the driver, {elapsed:.2f} s for the whole process")


def test_every_failed_item_is_listed_with_its_nodes(ray_cluster, tmp_path):
    proc = run_probe("ragen_probes.environment", [
        "--address", ray_cluster, "--checkpoint-dir", str(tmp_path / "ckpt"), "--requires", "numpy,no_such_module_xyz",
        "--model-path", str(tmp_path / "no-model"), "--python", "2.7", "--gpus-per-node", "1", "--min-free-gb", "1e9",
        "--entrypoint-json", json.dumps(["python", "train.py"]),
    ])
    assert proc.returncode == 5, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = result_of(proc)
    assert not res["ok"]
    by_item = {f["item"]: f for f in res["failures"]}
    assert set(by_item) == {"python", "module:no_such_module_xyz", "model:readable", "checkpoint:free_space", "entrypoint", "gpu:torch"}
    # Failures on every node are one entry naming all three; the GPU check ran only on the two GPU nodes.
    assert by_item["module:no_such_module_xyz"]["node"].count("head ") == 1
    assert by_item["module:no_such_module_xyz"]["node"].count("worker ") == 2
    assert by_item["gpu:torch"]["node"].count("worker ") == 2 and "head " not in by_item["gpu:torch"]["node"]
    assert by_item["entrypoint"]["node"] == "job driver (head)"
    assert all(f["fix"] for f in res["failures"])


def test_bad_arguments_exit_2(tmp_path):
    proc = run_probe("ragen_probes.environment", ["--checkpoint-dir", "relative/dir"])
    assert proc.returncode == 2 and "absolute --checkpoint-dir" in proc.stderr
