"""`python -m ragen_probes.environment --checkpoint-dir D [--requires a,b] [--gpus-per-node N] [--model-path P]
[--python 3.12] [--min-free-gb G] [--entrypoint-json '["python","train.py"]'] [--address auto] [--timeout-s 120] [--out f]`

Checks every alive Ray node of a freshly joined cluster against what the trainer will need, before
the all-reduce and before any training: one Ray task per node (pinned to it, holding all of its
GPUs) imports each required module, counts GPUs with torch, reads the model directory, and
creates, writes and fsyncs a file in the checkpoint directory. The job's driver (which runs where
the trainer's driver will, in the same working directory) checks the entrypoint's file.

Prints one line `ENVIRONMENT_RESULT {json}`: {ok, wall_s, nodes: [...], entrypoint, failures:
[{item, node, found, fix}]}; identical failures on several nodes are listed once with every node.
Exit codes: 0 every item met; 5 an item failed (the image or the storage misses the contract);
3 a node did not answer within --timeout-s; 2 bad arguments; 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import environment_checks as checks
from .result_line import report

EXIT_OK, EXIT_FAILED, EXIT_ARGS, EXIT_TIMEOUT, EXIT_UNMET = 0, 1, 2, 3, 5


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m ragen_probes.environment")
    p.add_argument("--checkpoint-dir", required=True)
    p.add_argument("--requires", default="", help="comma-separated modules every node must import")
    p.add_argument("--gpus-per-node", type=int, default=0, help="torch.cuda.device_count() expected on nodes that have GPUs; 0 skips the GPU check (logical GPUs of a stand-in)")
    p.add_argument("--model-path", default=None)
    p.add_argument("--python", default=None, help="required major.minor, such as 3.12")
    p.add_argument("--min-free-gb", type=float, default=0.0)
    p.add_argument("--entrypoint-json", default=None, help="the trainer's argv as JSON; its file must exist in this job's working directory")
    p.add_argument("--address", default=None)
    p.add_argument("--timeout-s", type=float, default=120.0)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def probe_node(spec: dict) -> dict:
    """Runs on one node (a Ray task): every check but the entrypoint's."""
    import ray

    found: dict = {"python": checks.python_info(), "hostname": os.uname().nodename}
    failures: list[dict] = []
    want = spec.get("python")
    if want and not found["python"]["version"].startswith(f"{want}."):
        failures.append(checks.failure("python", f"Python {found['python']['version']} ({found['python']['executable']})", f"use an image whose python is {want} (environment.python)"))
    found["modules"], more = checks.check_modules(spec["requires"])
    failures += more
    if spec["gpus_per_node"] > 0 and spec["node_gpus"] > 0:
        found["gpu"], more = checks.check_gpus(spec["gpus_per_node"], [str(g) for g in ray.get_gpu_ids()])
        failures += more
    if spec.get("model_path"):
        found["model"], more = checks.check_model(spec["model_path"])
        failures += more
    found["checkpoint"], more = checks.check_checkpoint_dir(spec["checkpoint_dir"], spec["min_free_bytes"])
    failures += more
    found["failures"] = failures
    return found


def node_label(node: dict) -> str:
    role = "head" if "node:__internal_head__" in node.get("Resources", {}) else "worker"
    return f"{role} {node.get('NodeManagerAddress')} ({node['NodeID'][:12]})"


def group_failures(failures: list[dict]) -> list[dict]:
    """One entry per distinct (item, found, fix), naming every node it happened on."""
    grouped: dict[tuple, dict] = {}
    for f in failures:
        key = (f["item"], f["found"], f["fix"])
        if key in grouped:
            grouped[key]["node"] += f", {f['node']}"
        else:
            grouped[key] = dict(f)
    return list(grouped.values())


def run(args, keep_ray: bool = False) -> tuple[int, dict]:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    started = time.monotonic()
    result: dict = {"ok": False, "nodes": [], "failures": []}
    ray.init(address=args.address) if args.address else ray.init()
    try:
        remote = ray.remote(probe_node)
        # Head first, then by address and id: failures list their nodes in a stable order.
        nodes = sorted((n for n in ray.nodes() if n.get("Alive")), key=lambda n: (not node_label(n).startswith("head "), n.get("NodeManagerAddress") or "", n["NodeID"]))
        refs = []
        for node in nodes:
            gpus = float(node.get("Resources", {}).get("GPU", 0))
            spec = {"requires": [m for m in args.requires.split(",") if m], "gpus_per_node": args.gpus_per_node, "node_gpus": gpus,
                    "model_path": args.model_path, "python": args.python, "checkpoint_dir": args.checkpoint_dir,
                    "min_free_bytes": int(args.min_free_gb * 1e9)}
            options = {"num_cpus": 0, "num_gpus": gpus, "max_retries": 0,
                       "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)}
            refs.append(remote.options(**options).remote(spec))
        failures: list[dict] = []
        if args.entrypoint_json:
            result["entrypoint"], more = checks.check_entrypoint(json.loads(args.entrypoint_json), os.getcwd())
            failures += [{**f, "node": "job driver (head)"} for f in more]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=args.timeout_s)
        silent = []
        for node, ref in zip(nodes, refs):
            label = node_label(node)
            if ref not in ready:
                silent.append(label)
                continue
            found = ray.get(ref)
            failures += [{**f, "node": label} for f in found.pop("failures")]
            result["nodes"].append({"node": label, "node_id": node["NodeID"], "node_ip": node.get("NodeManagerAddress"), **found})
        result["failures"] = group_failures(failures)
        result["wall_s"] = round(time.monotonic() - started, 3)
        if silent:
            result["reason"] = f"nodes did not answer the environment probe within {args.timeout_s:g} s: {', '.join(silent)}"
            return EXIT_TIMEOUT, result
        result["ok"] = not failures
        return (EXIT_OK if result["ok"] else EXIT_UNMET), result
    finally:
        if not keep_ray:
            ray.shutdown()


def main(argv=None, keep_ray: bool = False) -> int:
    """keep_ray: the connection stays up for the next check of the same driver (join_checks.py)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.timeout_s <= 0 or args.gpus_per_node < 0 or args.min_free_gb < 0 or not os.path.isabs(args.checkpoint_dir):
        print("environment: need an absolute --checkpoint-dir, --timeout-s > 0, --gpus-per-node >= 0, --min-free-gb >= 0", file=sys.stderr)
        return EXIT_ARGS
    try:
        code, result = run(args, keep_ray)
    except Exception as err:  # report, never crash without the result line
        code, result = EXIT_FAILED, {"ok": False, "nodes": [], "failures": [], "reason": f"{type(err).__name__}: {err}"}
    report("ENVIRONMENT", result, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
