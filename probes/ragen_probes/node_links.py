"""Per-node link diagnosis: which node of a cluster is slow, not only that the cluster is.

One actor per node (the first rank placed there) pulls an object from a peer's object store, both
ways, for each pair of a circulant pairing: node i with i+1, i+2, i+4, ... (mod n), so at most
n * ceil(log2 n) pairs and every node has two or more distinct peers once n >= 3. A pair's
bandwidth is its slower direction; a node's is its best pair (a healthy node has a healthy peer);
a node under `fraction` x the median node is suspect. Two nodes share one link: either end may be
the slow one, so the result says so and names none.
"""

from __future__ import annotations

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
    def __init__(self, node: int):
        self.node = node


def _pull_seconds(actors: list, receiver: int, sender: int, nbytes: int, timeout_s: float) -> float:
    """Seconds for `receiver` to fetch a fresh `nbytes` object from `sender`'s node.

    Raises _Stuck naming the node that did not answer within timeout_s: the sender when it could not
    even make the object, else the receiver (its fetch never finished).
    """
    import ray

    ref = actors[sender].blob.remote(nbytes)
    ready, _ = ray.wait([ref], timeout=timeout_s, fetch_local=False)
    if not ready:
        raise _Stuck(sender)
    pulled = actors[receiver].pull.remote([ref])  # in a list: the actor fetches (and times) it itself
    ready, _ = ray.wait([pulled], timeout=timeout_s)
    if not ready:
        raise _Stuck(receiver)
    return ray.get(pulled)


def measure(actors: list, nbytes: int, fraction: float, timeout_s: float, tries: int = 2) -> dict:
    """Measure every pair (both directions, best of `tries`), then score the nodes.

    A node that does not answer within timeout_s is `unresponsive` and every pair with it counts
    0 GB/s without more calls (its actor is blocked: calls would only queue behind it).
    """
    n = len(actors)
    pairs, pair_gbps, stuck = [], {}, set()
    started = time.monotonic()
    for a, b in pairs_of(n):
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
                stuck.add(err.node)
                direction["unresponsive"] = err.node
            directions.append(direction)
        gbps = min(d["gbps"] for d in directions)
        pair_gbps[(a, b)] = gbps
        pairs.append({"nodes": [a, b], "gbps": gbps, "directions": directions})
    scored = score(n, pair_gbps, fraction)
    if stuck:
        # Which end is stuck is known from which call hung, even with one link.
        scored["suspects"] = sorted(set(scored["suspects"]) | stuck)
        scored.pop("inconclusive", None)
    return {"bytes": nbytes, "fraction": fraction, "pairs": pairs, "unresponsive": sorted(stuck),
            "seconds": round(time.monotonic() - started, 3), **scored}
