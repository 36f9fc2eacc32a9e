"""Per-node link diagnosis: which node of a cluster is slow, not only that the cluster is.

One fresh actor per node (link_end.py) pulls an object from a peer's object store, both
ways, for each pair of a circulant pairing: node i with i+1, i+2, i+4, ... (mod n), so at most
n * ceil(log2 n) pairs and every node has two or more distinct peers once n >= 3. A pair's
bandwidth is its slower direction; a node's is its best pair (a healthy node has a healthy peer);
a node under `fraction` x the median node is suspect, and stays so only when a second measurement
against the fastest healthy nodes agrees (a busy host slows one round, a degraded NIC every round).
Two nodes share one link: either end may be
the slow one, so the result says so and names none.
"""

from __future__ import annotations

import math
import statistics
import time

LATENCY_BYTES = 256 * 1024  # above Ray's 100 KiB inline limit: the object moves node to node


def pairs_of(n: int) -> list[tuple[int, int]]:
    """The circulant pairing of n nodes, each pair once, in round order."""
    pairs: list[tuple[int, int]] = []
    step = 1
    while step < n:
        for i in range(n):
            a, b = sorted((i, (i + step) % n))
            if a != b and (a, b) not in pairs:
                pairs.append((a, b))
        step *= 2
    return pairs


def score(nodes: int, pair_gbps: dict[tuple[int, int], float], fraction: float) -> dict:
    """Each node's best pair, the median node, the floor and the suspects (indices)."""
    best = [max((g for p, g in pair_gbps.items() if i in p), default=0.0) for i in range(nodes)]
    median = statistics.median(best) if best else 0.0
    floor = fraction * median
    if nodes < 3:
        return {"best_gbps": best, "median_gbps": median, "floor_gbps": floor, "suspects": [],
                "inconclusive": "two nodes share one link: a slow link cannot be pinned on either end"}
    return {"best_gbps": best, "median_gbps": median, "floor_gbps": floor,
            "suspects": [i for i, g in enumerate(best) if g < floor]}


class _Stuck(Exception):
    def __init__(self, node: int | None):
        self.node = node  # None: the fetch hung, yet both ends still answer the driver


def _silent_end(actors: list, ends: tuple[int, int], timeout_s: float) -> int | None:
    """Of a pair whose fetch hung, the end that no longer answers the driver (a node cut off hangs
    its peer's fetch too, so the hang alone does not say which end it is); None if both answer.
    The actors are threaded: a ping is answered beside a hung fetch."""
    import ray

    pings = [actors[i].ping.remote() for i in ends]
    ready, _ = ray.wait(pings, num_returns=len(pings), timeout=timeout_s)
    return next((i for i, ping in zip(ends, pings) if ping not in ready), None)


def _pull_seconds(actors: list, receiver: int, sender: int, nbytes: int, timeout_s: float) -> float:
    """Seconds for `receiver` to fetch a fresh `nbytes` object from `sender`'s node.

    Raises _Stuck naming the node that did not answer within timeout_s, or whose actor died: the
    sender when it could not even make the object or its object could not be fetched; when the
    fetch hangs, whichever end no longer answers a ping (or none).
    """
    import ray

    ref = actors[sender].blob.remote(nbytes)
    ready, _ = ray.wait([ref], timeout=timeout_s, fetch_local=False)
    if not ready:
        raise _Stuck(sender)
    pulled = actors[receiver].pull.remote([ref])  # in a list: the actor fetches (and times) it itself
    ready, _ = ray.wait([pulled], timeout=timeout_s)
    if not ready:
        raise _Stuck(_silent_end(actors, (sender, receiver), timeout_s))
    try:
        return ray.get(pulled)
    except ray.exceptions.RayTaskError:
        # The receiver ran and its fetch failed: the object, or the sender that owns it, is gone.
        # (Checked first: a task error whose cause is a dead actor is also a RayActorError.)
        raise _Stuck(sender) from None
    except ray.exceptions.RayError:
        raise _Stuck(receiver) from None  # the receiver's own actor died


def recheck(nodes: int, pair_gbps: dict[tuple[int, int], float], remeasured: dict[tuple[int, int], float],
            fraction: float, suspects: list[int]) -> dict:
    """Score again with each pair at its better measurement; a node stays suspect only when it was in
    the first round and is still under the floor (a busy moment passes, a degraded NIC does not)."""
    merged = {p: max(g, remeasured.get(p, 0.0)) for p, g in pair_gbps.items()}
    merged.update({p: g for p, g in remeasured.items() if p not in pair_gbps})
    scored = score(nodes, merged, fraction)
    scored["cleared"] = sorted(set(suspects) - set(scored["suspects"]))
    scored["suspects"] = sorted(set(suspects) & set(scored["suspects"]))
    return scored


def recheck_peers(node: int, best: list[float], suspects: list[int], stuck: set) -> list[int]:
    """The fastest healthy nodes to measure a suspect against again: ceil(log2 n) of them (at least
    two), so the recheck keeps the test within n * log n pairs."""
    healthy = sorted((i for i in range(len(best)) if i != node and i not in suspects and i not in stuck),
                     key=lambda i: -best[i])
    return healthy[:max(2, math.ceil(math.log2(len(best))))]


def _measure_pair(actors: list, a: int, b: int, nbytes: int, timeout_s: float, tries: int, stuck: set) -> dict:
    """Both directions of one pair (best of `tries`, then a latency pull); nodes that hang join `stuck`."""
    directions = []
    for receiver, sender in ((a, b), (b, a)):
        direction = {"from": sender, "to": receiver, "gbps": 0.0, "latency_ms": None}
        try:
            if stuck & {receiver, sender}:
                raise _Stuck(min(stuck & {receiver, sender}))
            best = min(_pull_seconds(actors, receiver, sender, nbytes, timeout_s) for _ in range(tries))
            latency = _pull_seconds(actors, receiver, sender, LATENCY_BYTES, timeout_s)
            direction.update(gbps=round(nbytes / best / 1e9, 6), latency_ms=round(latency * 1000, 3))
        except _Stuck as err:
            if err.node is None:
                direction["timed_out"] = True  # counts 0 GB/s: the node with no good pair is suspect
            else:
                stuck.add(err.node)
                direction["unresponsive"] = err.node
        directions.append(direction)
    return {"nodes": [a, b], "gbps": min(d["gbps"] for d in directions), "directions": directions}


def measure(actors: list, nbytes: int, fraction: float, timeout_s: float, tries: int = 2,
            silent: set[int] = frozenset()) -> dict:
    """Measure every pair (both directions, best of `tries`), score the nodes, then measure each
    suspect again against the fastest healthy nodes (recheck_peers) and keep only those still slow.

    A node in `silent` (its actor never answered) or that does not answer a call within timeout_s is
    `unresponsive` and every pair with it counts 0 GB/s without more calls (calls would only queue
    behind the blocked one).
    """
    n = len(actors)
    stuck: set[int] = set(silent)
    started = time.monotonic()
    pairs = [_measure_pair(actors, a, b, nbytes, timeout_s, tries, stuck) for a, b in pairs_of(n)]
    pair_gbps = {tuple(p["nodes"]): p["gbps"] for p in pairs}
    scored = score(n, pair_gbps, fraction)
    first = sorted(set(scored["suspects"]) - stuck)
    rechecked = []
    if first:
        rechecked = [_measure_pair(actors, *sorted((s, peer)), nbytes, timeout_s, tries, stuck)
                     for s in first for peer in recheck_peers(s, scored["best_gbps"], first, stuck)]
        scored = recheck(n, pair_gbps, {tuple(p["nodes"]): p["gbps"] for p in rechecked}, fraction, first)
    if stuck:
        # Which end is stuck is known from which call hung, even with one link.
        scored["suspects"] = sorted(set(scored["suspects"]) | stuck)
        scored.pop("inconclusive", None)
    return {"bytes": nbytes, "fraction": fraction, "pairs": pairs, "rechecked": rechecked,
            "unresponsive": sorted(stuck), "seconds": round(time.monotonic() - started, 3), **scored}
