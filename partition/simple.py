"""Partitions that need no METIS: contiguous id ranges and a seeded random assignment (baselines and tests)."""

from __future__ import annotations

import numbers

import numpy as np

from distsm.graph import Graph
from distsm.partition.metis import check_k


def contiguous_parts(graph: Graph, k: int) -> np.ndarray:
    """Part ``i`` holds the id range ``[ceil(i*n/k), ceil((i+1)*n/k))``; returns ``int32[n]``.

    Part sizes differ by at most one; every part is non-empty when ``k <= n`` (for ``k > n`` some parts are empty).
    """
    k = check_k(k)
    n = graph.n
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    return ((np.arange(n, dtype=np.int64) * k) // n).astype(np.int32)


def random_parts(graph: Graph, k: int, *, seed: int = 0) -> np.ndarray:
    """A seeded random balanced assignment; returns ``int32[n]``.

    A random permutation of the vertices is dealt round-robin into the ``k`` parts, so part sizes differ by at most
    one and every part is non-empty when ``k <= n``.  The same ``(n, k, seed)`` gives the same assignment.
    """
    k = check_k(k)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    return (rng.permutation(graph.n) % k).astype(np.int32)
