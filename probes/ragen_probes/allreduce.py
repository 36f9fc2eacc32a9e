"""`python -m ragen_probes.allreduce --world-size N [--address auto] [--size-mb 4] [--iters 5] [--timeout-s 180] [--start-timeout-s 600] [--out f]`

All-reduce across N Ray actors, one per GPU slot (placed like the trainer: one STRICT_PACK placement
group per node of --gpus-per-node bundles). Path: torch NCCL if every rank has CUDA, else torch gloo
if every rank has torch, else a numpy ring all-reduce through Ray object refs. Prints one line
`ALLREDUCE_RESULT {json}`. Two budgets: --start-timeout-s for the setup (waiting for GPUs and
placement, starting the actors, importing torch in them), then --timeout-s for the all-reduce itself,
counted from the moment every actor has answered (a slow image start is no slow network). Exit
codes: 0 ok; 2 bad arguments; 3 a budget ran out; 4 the reduced values were wrong; 5 a node's links are
under --node-floor-fraction of the median node's (node_links.py on a fresh actor per node: measured
after the all-reduce, also after a failed one, so a failure names its node); 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from .result_line import report

EXIT_OK, EXIT_FAILED, EXIT_ARGS, EXIT_TIMEOUT, EXIT_WRONG, EXIT_SLOW_NODE = 0, 1, 2, 3, 4, 5


class PreflightTimeout(RuntimeError):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m ragen_probes.allreduce")
    p.add_argument("--world-size", type=int, required=True)
    p.add_argument("--gpus-per-node", type=int, default=1, help="bundles per placement group (node); must divide --world-size")
    p.add_argument("--address", default=None, help="Ray address (auto = attach to a running cluster); default: ray.init()")
    p.add_argument("--size-mb", type=float, default=4.0)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--timeout-s", type=float, default=180.0, help="the all-reduce, from the actors' start")
    p.add_argument("--start-timeout-s", type=float, default=600.0, help="GPUs, placement, actor start, torch import")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo", "ray"), default="auto")
    p.add_argument("--cpus-per-rank", type=float, default=0.25)
    p.add_argument("--out", default=None)
    p.add_argument("--links-mb", type=float, default=8.0, help="object size of the per-node link test; 0 = no link test")
    p.add_argument("--node-floor-fraction", type=float, default=0.5,
                   help="a node whose best link is under this fraction of the median node's is suspect")
    p.add_argument("--links-timeout-s", type=float, default=15.0, help="per call of the link test: a node slower is unresponsive")
    p.add_argument("--links-start-timeout-s", type=float, default=30.0,
                   help="for the link test's fresh actor on each node to answer: a node slower is unresponsive")
    # Test hook (stand-in for a degraded NIC): the link test's fetches on this rank's node take 0.3 s longer.
    p.add_argument("--simulate-slow-rank", type=int, default=None, help=argparse.SUPPRESS)
    # Test hook: make one rank hang, to prove the timeout turns a hang into exit 3.
    p.add_argument("--simulate-stall-rank", type=int, default=None, help=argparse.SUPPRESS)
    # Test hook: one rank's node drops off mid all-reduce (its raylet killed), to prove it is named.
    p.add_argument("--simulate-die-rank", type=int, default=None, help=argparse.SUPPRESS)
    # Test hook: every actor takes this long to start (a slow torch import), to prove it is not
    # counted in --timeout-s.
    p.add_argument("--simulate-start-s", type=float, default=0.0, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def choose_path(requested: str, probes: list[dict]) -> str:
    if requested == "nccl" or (requested == "auto" and all(p["cuda"] for p in probes)):
        return "nccl"
    if requested == "gloo" or (requested == "auto" and all(p["torch"] for p in probes)):
        return "gloo"
    return "ray-ring-numpy"


def ring_allreduce(ranks, deadline: float) -> float:
    """One ring all-reduce; returns seconds. Chunk data moves actor-to-actor as object refs."""
    n = len(ranks)
    started = time.perf_counter()
    tasks = []  # (executing rank, ref, the ref it waits for or None), in submission order

    def step(send, receive, index_of):
        refs = [ranks[r].get_chunk.remote(index_of(r)) for r in range(n)]
        tasks.extend((r, refs[r], None) for r in range(n))
        acks = [getattr(ranks[(r + 1) % n], receive).remote(index_of(r), refs[r]) for r in range(n)]
        tasks.extend(((r + 1) % n, acks[r], refs[r]) for r in range(n))

    for s in range(n - 1):  # reduce-scatter: rank r adds its chunk r-s into rank r+1's
        step("get_chunk", "add_chunk", lambda r, s=s: (r - s) % n)
    for s in range(n - 1):  # all-gather: the reduced chunk r+1-s travels on round the ring
        step("get_chunk", "set_chunk", lambda r, s=s: (r + 1 - s) % n)
    if tasks:
        _wait_ring(tasks, deadline)
    return time.perf_counter() - started


def _wait_ring(tasks, deadline: float) -> None:
    import ray

    refs = [ref for _, ref, _ in tasks]
    # fetch_local=False: readiness only; pulling the chunks to the driver would distort the timing.
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=max(0.0, deadline - time.monotonic()), fetch_local=False)
    if len(ready) == len(refs):
        ray.get([ref for _, ref, needs in tasks if needs is not None])  # the acks: raise any actor error
        return
    done = set(ready)
    # Blame a rank whose earliest unfinished task had its input: it is stuck itself. The others
    # are only waiting for a stuck neighbour (actor calls run in order, so one hang stalls the ring).
    stuck, waiting = set(), set()
    for rank in sorted({r for r, _, _ in tasks}):
        pending = [(ref, needs) for r, ref, needs in tasks if r == rank and ref not in done]
        if pending:
            _, needs = pending[0]
            (stuck if needs is None or needs in done else waiting).add(rank)
    message = f"ranks {sorted(stuck or waiting)} did not report"
    if stuck and waiting:
        message += f" (ranks {sorted(waiting)} were waiting on them)"
    raise PreflightTimeout(message)


def _wait_all(refs, deadline: float, receivers: list[int]) -> None:
    import ray

    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=max(0.0, deadline - time.monotonic()))
    if len(ready) < len(refs):
        ready_set = set(ready)
        late = sorted(receivers[i] for i, ref in enumerate(refs) if ref not in ready_set)
        raise PreflightTimeout(f"ranks {late} did not report")
    ray.get(refs)


def run(args) -> tuple[int, dict]:
    import ray

    from . import placement
    from .allreduce_rank import AllReduceRank

    n = args.world_size
    elements = max(n, int(args.size_mb * 1024 * 1024) // 4)
    result = {"ok": False, "path": None, "world_size": n, "bytes": elements * 4, "iters": args.iters,
              "latency_ms": None, "bus_bandwidth_gbps": None, "nodes": [], "ranks": []}
    ranks, probes = [], []
    setup_started = time.monotonic()
    deadline = setup_started + args.start_timeout_s  # the setup's budget, until every actor answered
    in_setup = True
    groups = []
    try:
        if not ray.is_initialized():  # join_checks.py's driver is connected already
            ray.init(address=args.address) if args.address else ray.init()
        nnodes = n // args.gpus_per_node
        shape = f"--world-size {n} = {nnodes} node(s) x --gpus-per-node {args.gpus_per_node}"
        placement.wait_for_gpus(n, max(0.0, deadline - time.monotonic()), shape=shape)
        groups = placement.create_placement_groups(nnodes, args.gpus_per_node, args.cpus_per_rank, max(0.0, deadline - time.monotonic()))
        opts = placement.slot_options(groups, args.gpus_per_node, args.cpus_per_rank)
        ranks = [AllReduceRank.options(**o).remote(r, n, elements, stall=(r == args.simulate_stall_rank),
                                                   die=(r == args.simulate_die_rank))
                 for r, o in enumerate(opts)]
        probe_refs = [r.probe.remote(args.simulate_start_s) for r in ranks]
        _wait_all(probe_refs, deadline, list(range(n)))
        probes = ray.get(probe_refs)
        # Every actor runs and has imported torch: the all-reduce's own budget starts now.
        in_setup = False
        result["start_s"] = round(time.monotonic() - setup_started, 3)
        deadline = time.monotonic() + args.timeout_s
        result["ranks"] = [{"rank": p["rank"], "node_id": p["node_id"], "node_ip": p["node_ip"], "gpu_ids": p["gpu_ids"]} for p in probes]
        result["nodes"] = list(dict.fromkeys(p["node_id"] for p in probes))
        # Per node, where the image has nvidia-smi (gpu_health.py): the manifest keeps it.
        health = {p["node_id"]: p["gpu_health"] for p in probes if p.get("gpu_health") is not None}
        if health:
            result["gpu_health"] = health
        path = result["path"] = choose_path(args.backend, probes)
        print(f"allreduce path: {path}", flush=True)

        latencies, mismatches = [], 0
        if path == "ray-ring-numpy":
            for iteration in range(args.iters + 1):  # iteration 0 warms up the object store, untimed
                _wait_all([r.fill.remote(iteration) for r in ranks], deadline, list(range(n)))
                elapsed = ring_allreduce(ranks, deadline)
                checks = [r.verify.remote() for r in ranks]
                _wait_all(checks, deadline, list(range(n)))
                mismatches += sum(ray.get(checks))
                if iteration > 0:
                    latencies.append(elapsed)
        else:
            master = f"{probes[0]['node_ip']}:{ray.get(ranks[0].free_port.remote())}"
            inits = [r.torch_init.remote(path, master, args.timeout_s) for r in ranks]
            _wait_all(inits, deadline, list(range(n)))
            runs = [r.torch_run.remote(path, args.iters) for r in ranks]
            _wait_all(runs, deadline, list(range(n)))
            outs = ray.get(runs)
            mismatches = sum(o["mismatches"] for o in outs)
            latencies = [max(o["latencies"][i] for o in outs) for i in range(args.iters)]

        median = statistics.median(latencies) if latencies else 0.0
        algbw = result["bytes"] / median if median > 0 else 0.0
        result["latency_ms"] = round(median * 1000, 4)
        result["bus_bandwidth_gbps"] = round(algbw * 2 * (n - 1) / n / 1e9, 6)  # GB/s, as nccl-tests reports busbw
        if mismatches:
            result["reason"] = f"all-reduce result is wrong: {mismatches} element(s) differ from the exact sum"
            return EXIT_WRONG, result
        if _diagnose_nodes(args, result, probes):
            return EXIT_SLOW_NODE, result
        result["ok"] = True
        return EXIT_OK, result
    except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as err:
        if in_setup:
            raise
        # A rank's actor, or the chunk it owned, died mid all-reduce: its process or its node is
        # gone. The link test, on fresh actors, names a node that no longer answers (a lost process
        # alone names none).
        result["reason"] = f"a rank's actor died during the all-reduce (its process or node is gone): {type(err).__name__}"
        _diagnose_nodes(args, result, probes)
        return EXIT_FAILED, result
    except (PreflightTimeout, placement.ResourceError) as err:
        if isinstance(err, placement.ResourceError):
            prefix = ""
        elif in_setup:
            prefix = f"the probe's actors did not start within {args.start_timeout_s:g} s (GPUs, placement, actor start, torch import): "
        else:
            prefix = f"all-reduce did not finish within {args.timeout_s:g} s of the actors' start: "
        result["reason"] = prefix + str(err)
        if not in_setup:
            _diagnose_nodes(args, result, probes)  # names the node behind the timeout
        return EXIT_TIMEOUT, result
    finally:
        if ray.is_initialized():
            placement.release(groups)
            ray.shutdown()


def _diagnose_nodes(args, result: dict, probes: list[dict]) -> bool:
    """The per-node link test (node_links.py, on a fresh actor per node: link_end.py) into
    result["links"]; True when it found suspects, whose names and numbers then lead result["reason"]."""
    from . import link_end, node_links

    nodes = result["nodes"]
    if args.links_mb <= 0 or len(nodes) < 2:
        return False
    first_rank = [next(p["rank"] for p in probes if p["node_id"] == node) for node in nodes]
    slow = next((nodes.index(p["node_id"]) for p in probes if p["rank"] == args.simulate_slow_rank), None)
    ends, silent = link_end.start(nodes, args.links_start_timeout_s, slow_index=slow)
    links = node_links.measure(ends, int(args.links_mb * 1024 * 1024), args.node_floor_fraction,
                               args.links_timeout_s, silent=silent)
    ip_of = {p["node_id"]: p["node_ip"] for p in probes}
    name_of = {p["node_id"]: p.get("node_name") for p in probes}
    links["nodes"] = [{"node_id": node, "node_ip": ip_of[node], "node_name": name_of[node], "rank": first_rank[i],
                       "best_gbps": links["best_gbps"][i]}
                      for i, node in enumerate(nodes)]
    links["suspects"] = [links["nodes"][i] for i in links["suspects"]]
    result["links"] = links
    if not links["suspects"]:
        return False
    named = "; ".join(
        f"node {s['node_name']} ({s['node_ip']}, {s['node_id'][:12]}, rank {s['rank']}): "
        + ("did not answer (its link-test actor did not start within %gs, a fetch took over %gs, or it died)"
           % (args.links_start_timeout_s, args.links_timeout_s) if nodes.index(s["node_id"]) in links["unresponsive"]
           else f"best link {s['best_gbps']:.4g} GB/s")
        for s in links["suspects"])
    verdict = (f"slow node(s): {named}; the median node's best link is {links['median_gbps']:.4g} GB/s, "
               f"the floor {args.node_floor_fraction:g} x that = {links['floor_gbps']:.4g} GB/s")
    result["ok"] = False
    result["reason"] = f"{result['reason']}; {verdict}" if result.get("reason") else verdict
    return True


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if (args.world_size < 1 or args.iters < 1 or args.size_mb <= 0 or args.world_size % args.gpus_per_node
            or args.links_mb < 0 or not 0 < args.node_floor_fraction < 1):
        print("allreduce: need --world-size >= 1 divisible by --gpus-per-node, --iters >= 1, --size-mb > 0, "
              "--links-mb >= 0, 0 < --node-floor-fraction < 1", file=sys.stderr)
        return EXIT_ARGS
    try:
        code, result = run(args)
    except Exception as err:  # report, never hang or crash without the result line
        code, result = EXIT_FAILED, {"ok": False, "world_size": args.world_size, "reason": f"{type(err).__name__}: {err}"}
    report("ALLREDUCE", result, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
