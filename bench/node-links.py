"""The per-node link test on a real 4-worker Ray cluster of this machine: false positives over
--healthy checks of healthy nodes, and the time to name a slow node (stand-in: one rank's fetches
0.3 s slower, --slow checks), each check a full `python -m ragen_probes.allreduce` as the join stage
runs it. --burn N keeps N busy-loop processes running throughout (a CI machine's load).
Writes bench/results/node-links.json (commit, date, load, numbers).
Usage: .venv/bin/python bench/node-links.py [--healthy 20] [--slow 5] [--burn 0]
"""

import argparse
import datetime
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBES = REPO / "probes"
NODE_IP = "127.0.0.2"  # loopback other than 127.0.0.1, as the probe tests use


def burn() -> None:
    while True:
        pass


def check(address: str, slow: bool) -> dict:
    argv = [sys.executable, "-m", "ragen_probes.allreduce", "--world-size", "4", "--address", address,
            "--size-mb", "1", "--iters", "2"] + (["--simulate-slow-rank", "2"] if slow else [])
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=PROBES)
    wall = time.monotonic() - started
    line = next((l for l in proc.stdout.splitlines() if l.startswith("ALLREDUCE_RESULT ")), None)
    res = json.loads(line[len("ALLREDUCE_RESULT "):]) if line else {}
    links = res.get("links", {})
    ranks = [s["rank"] for s in links.get("suspects", [])]
    return {"exit": proc.returncode, "suspect_ranks": ranks, "cleared": links.get("cleared", []),
            "rechecked_pairs": len(links.get("rechecked", [])), "links_s": links.get("seconds"), "probe_wall_s": round(wall, 3)}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO).stdout.strip()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--healthy", type=int, default=20)
    p.add_argument("--slow", type=int, default=5)
    p.add_argument("--burn", type=int, default=0)
    args = p.parse_args()
    load_at_start, started_at = os.getloadavg(), datetime.datetime.now(datetime.timezone.utc).isoformat()
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(args.burn)]
    for b in burners:
        b.start()
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0, "node_ip_address": NODE_IP})
    try:
        for _ in range(4):
            cluster.add_node(num_cpus=1, num_gpus=1, node_ip_address=NODE_IP)
        cluster.wait_for_nodes()
        healthy = []
        for i in range(args.healthy):
            healthy.append(check(cluster.address, slow=False))
            print(f"healthy {i + 1}/{args.healthy}: {healthy[-1]}", flush=True)
        slow = []
        for i in range(args.slow):
            slow.append(check(cluster.address, slow=True))
            print(f"slow {i + 1}/{args.slow}: {slow[-1]}", flush=True)
    finally:
        cluster.shutdown()
        for b in burners:
            b.terminate()
    false_positives = sum(1 for h in healthy if h["exit"] != 0)
    named = [s for s in slow if s["exit"] == 5 and s["suspect_ranks"] == [2]]
    numbers = {
        "workers": 4,
        "burners": args.burn,
        "healthy_checks": len(healthy),
        "false_positives": false_positives,
        "cleared_by_recheck": sum(1 for h in healthy if h["cleared"]),
        "healthy_links_s_median": statistics.median(h["links_s"] for h in healthy if h["links_s"] is not None) if healthy else None,
        "slow_checks": len(slow),
        "slow_named_exactly": len(named),
        "time_to_name_links_s_median": statistics.median(s["links_s"] for s in named) if named else None,
        "time_to_name_probe_wall_s_median": statistics.median(s["probe_wall_s"] for s in named) if named else None,
        "healthy": healthy,
        "slow": slow,
    }
    print(json.dumps({k: v for k, v in numbers.items() if k not in ("healthy", "slow")}, indent=2))
    record = {
        "bench": "node-links",
        "command": [".venv/bin/python", "bench/node-links.py", *sys.argv[1:]],
        "commit": git("rev-parse", "HEAD") or "unknown",
        "dirty": git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results") != "",
        "startedAt": started_at,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "machine": {"cpus": os.cpu_count()},
        "loadavg": {"atStart": list(load_at_start), "atEnd": list(os.getloadavg())},
        # The code these numbers depend on: test/unit/figures.test.ts flags them once it changes.
        "measured": ["bench/node-links.py", "probes/ragen_probes"],
        "numbers": numbers,
    }
    out = REPO / "bench" / "results" / "node-links.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
