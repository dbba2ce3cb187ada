"""How a batch's whole queries are packed into tasks: a cheap cost estimate per query, and groups of queries sized
so that a few tasks per worker carry the batch, heaviest first and the smallest last (the tail balances).

A task costs the scheduler a round trip and the worker its Python overhead whatever it computes; a batch of
hundreds of millisecond queries sent one task each waits on that overhead (measured: see benchmarks/README.md's
cluster-scaling section).  Groups amortise it; decreasing group sizes (guided self-scheduling) keep the last tasks
short, so no worker idles long while another finishes a big group.
"""

from __future__ import annotations

import numpy as np

from distsm.graph import Graph

#: Groups per worker a batch's whole queries are packed into (about; see :func:`whole_groups`).
GROUPS_PER_WORKER = 4


class LabelDegreeCost:
    """A query's cost by its data graph's labels and degrees, in microseconds of client time and no filter: the
    total degree of the data vertices that pass a label-and-degree check for the query's most selective vertex
    (the adjacency a join starting there reads at its first level, as :func:`~distsm.matcher.work_estimate`
    measures over real candidates).  Built once per data graph: its vertices sorted by (label, degree) with
    prefix sums of their degrees."""

    def __init__(self, data: Graph):
        degrees = np.asarray(data.degrees, np.int64)
        labels = np.asarray(data.vertex_labels, np.int64)
        self._stride = int(degrees.max(initial=0)) + 2
        keys = labels * self._stride + degrees
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._sums = np.concatenate([[0], np.cumsum(degrees[order])])

    def __call__(self, query: Graph) -> float:
        """The estimate for ``query`` (in the data graph's label codes); 0 when some vertex can have no match."""
        labels = np.asarray(query.vertex_labels, np.int64)
        degrees = np.minimum(np.asarray(query.degrees, np.int64), self._stride - 1)
        # Vertices of label l and degree >= d are the keys in [l * stride + d, (l + 1) * stride).
        lo = np.searchsorted(self._keys, labels * self._stride + degrees, side="left")
        hi = np.searchsorted(self._keys, (labels + 1) * self._stride, side="left")
        return float((self._sums[hi] - self._sums[lo]).min()) if query.n else 0.0


def whole_groups(costs: list[float], workers: int, per_worker: int = GROUPS_PER_WORKER) -> list[list[int]]:
    """Indices of queries of estimated ``costs`` packed into groups for ``workers`` workers, heaviest first.

    The queries are taken in decreasing cost (ties in index order); each query weighs its cost plus the batch's
    mean cost (the fixed part of every query's time: filtering, planning, Python), so queries estimated at 0
    still count (all at 0: the queries weigh the same).  Each group takes queries until it weighs
    ``remaining / (2 * workers)`` (guided self-scheduling) but at least ``total / (2 * per_worker * workers)``, and
    at least one query: the first groups are big, the last
    small, and a query heavier than a group's target is a group of its own.  That makes about ``per_worker``
    groups per worker (fewer for a short batch: never more groups than queries)."""
    if not costs:
        return []
    if workers < 1 or per_worker < 1:
        raise ValueError(f"workers and per_worker must be >= 1, got {workers} and {per_worker}")
    mean = sum(costs) / len(costs)
    weights = [c + mean for c in costs] if mean > 0 else [1.0] * len(costs)
    order = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    total = sum(weights)
    remaining = total
    floor = total / (2 * per_worker * workers)
    groups: list[list[int]] = []
    group: list[int] = []
    weight = target = 0.0
    for i in order:
        if not group:
            target = max(remaining / (2 * workers), floor)
        group.append(i)
        weight += weights[i]
        if weight >= target * (1 - 1e-9):
            groups.append(group)
            remaining -= weight
            group, weight = [], 0.0
    if group:
        groups.append(group)
    return groups
