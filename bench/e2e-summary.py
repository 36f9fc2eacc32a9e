"""Medians and ratios for bench/e2e.sh from its result folder (`/usr/bin/time -v` files, reap-tree
JSON, gaps JSON). Usage: python3 bench/e2e-summary.py <folder> <n>"""

import datetime
import json
import os
import statistics
import subprocess
import sys

folder, n = sys.argv[1], int(sys.argv[2])


def time_v(path: str) -> dict:
    fields = {}
    for line in open(path):
        key, _, value = line.strip().rpartition(": ")
        fields[key] = value
    h, _, rest = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].rpartition(":")
    wall = float(rest) + 60 * sum(int(p) * 60**i for i, p in enumerate(reversed(h.split(":"))) if p)
    cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
    return {"wall": wall, "cpu": cpu, "rss": int(fields["Maximum resident set size (kbytes)"]) / 1024}


def own_largest(path: str) -> tuple[float, str]:
    """The largest process that is not Ray's (node, the Temporal dev server, the shell, ray CLI calls excluded)."""
    largest = json.load(open(path))["largest"]
    own = [p for p in largest if not any(r in p["cmd"] for r in ("ray", "raylet", "gcs_server", "python"))]
    top = own[0] if own else {"kb": 0, "cmd": "-"}
    return top["kb"] / 1024, top["cmd"]


rows = {"orch": [], "plain": []}
for side in rows:
    for i in range(1, n + 1):
        rows[side].append({**time_v(f"{folder}/{side}-{i}.time"), "json": f"{folder}/{side}-{i}.json"})
med = {s: {k: statistics.median(r[k] for r in rows[s]) for k in ("wall", "cpu", "rss")} for s in rows}
print(f"\n{'figure (median of ' + str(n) + ')':<44}{'orchestrator':>14}{'plain script':>14}{'ratio':>8}")
for key, label, unit in (("wall", "wall", "s"), ("cpu", "CPU (user+sys)", "s"), ("rss", "largest process, whole tree", "MiB")):
    o, p = med["orch"][key], med["plain"][key]
    print(f"{label:<44}{o:>12.1f} {unit:<3}{p:>10.1f} {unit:<3}{o / p:>6.2f}")
own = [own_largest(r["json"]) for r in rows["orch"]]
own_mib = statistics.median(m for m, _ in own)
print(f"{'largest orchestrator process (not Ray)':<44}{own_mib:>12.1f} MiB   ({max(own)[1]})")
largest = json.load(open(rows["orch"][0]["json"]))["largest"][:4]
print("largest processes of orchestrator run 1: " + "; ".join(f"{p['kb'] / 1024:.0f} MiB {p['cmd']}" for p in largest))
largest = json.load(open(rows["plain"][0]["json"]))["largest"][:4]
print("largest processes of plain run 1: " + "; ".join(f"{p['kb'] / 1024:.0f} MiB {p['cmd']}" for p in largest))

gaps = [json.loads(open(f"{folder}/orch-{i}.gaps").read()) for i in range(1, n + 1)]
print("\norchestration (median over runs, seconds, from each run's history):")
for key in gaps[0]["stageGaps"]:
    values = [g["stageGaps"].get(key) for g in gaps if key in g["stageGaps"]]
    print(f"  gap {key:<40}{statistics.median(values):>8.3f}")
for key in ("readyToFirstStep", "gpuIdleStart", "lastStepToDelete", "gpuIdleEnd", "historyEvents"):
    values = [g[key] for g in gaps if g[key] is not None]
    print(f"  {key:<44}{statistics.median(values) if values else float('nan'):>8.3f}")
print("  stage durations: " + ", ".join(f"{k} {statistics.median(g['stages'][k] for g in gaps):.1f}" for k in gaps[0]["stages"]))

# The results file (docs/benchmarks.md): commit, date, machine, load and the numbers above, both
# sides from this one run of bench/e2e.sh.
repo = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def median_of(key: str) -> float | None:
    values = [g[key] for g in gaps if g[key] is not None]
    return statistics.median(values) if values else None


status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results")
results = {
    "bench": "e2e",
    "command": f"bash bench/e2e.sh {n}",
    "commit": git("rev-parse", "HEAD") or "unknown",
    "dirty": "unknown" if status is None else status != "",
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    "machine": {"cpus": os.cpu_count()},
    "loadavg": {"atEnd": list(os.getloadavg())},
    # The code these numbers depend on: test/unit/figures.test.ts flags them once it changes.
    "measured": ["bench/e2e.sh", "bench/e2e-plain.sh", "bench/e2e-summary.py", "src", "probes/ragen_probes", "payload/ragen_toy"],
    "numbers": {
        "runsEachSide": n,
        "median": {"orchestrator": med["orch"], "plain": med["plain"]},
        "ratio": {k: med["orch"][k] / med["plain"][k] for k in ("wall", "cpu", "rss")},
        "units": {"wall": "s", "cpu": "s (user+sys)", "rss": "MiB, largest process of the tree"},
        "largestOrchestratorProcessMiB": own_mib,
        "stageGapsSeconds": {
            key: statistics.median(g["stageGaps"][key] for g in gaps if key in g["stageGaps"])
            for key in gaps[0]["stageGaps"]
        },
        **{
            f"{key}Seconds" if key != "historyEvents" else key: median_of(key)
            for key in ("readyToFirstStep", "gpuIdleStart", "lastStepToDelete", "gpuIdleEnd", "historyEvents")
        },
        "stageSeconds": {k: statistics.median(g["stages"][k] for g in gaps) for k in gaps[0]["stages"]},
        "folder": folder,
    },
}
os.makedirs(os.path.join(repo, "bench", "results"), exist_ok=True)
path = os.path.join(repo, "bench", "results", "e2e.json")
with open(path, "w") as f:
    json.dump(results, f, indent=2)
    f.write("\n")
print(f"results: {path}")
