"""The data graph renumbered by degree, for the depth-first set-intersection search (:mod:`distsm.kernels.dfs`).

Vertices get ranks in order of (degree, id), and each vertex's adjacency is stored per effective edge label as a
run sorted by rank: ``nbr[ptr[v * L + e]:ptr[v * L + e + 1]]`` is ``N(v, e)``.  Symmetry breaking compares images
(``f(a) < f(b)``), and any total order of the data vertices keeps one embedding per matched subgraph; comparing
ranks makes the first vertices of a search the low-degree ones, so a search that starts from ``v`` with its
later vertices above ``v`` reads only the part of each run above ``v`` (a binary search cuts it): the
degree-ordered orientation G2Miner and GraphPi use for cliques, for every pattern.  The runs are indexed
directly (``n * L + 1`` offsets), so graphs with many effective edge labels are not ranked
(:data:`MAX_RANKED_LABELS`): at those label counts the search is selective and the breadth-first join serves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distsm.kernels.index import DataIndex
from distsm.kernels.lifetime_cache import LifetimeCache

#: Effective edge labels beyond which a graph gets no ranked copy (its offsets grow with ``n * L``).
MAX_RANKED_LABELS = 16

_RANKED = LifetimeCache()  # DataIndex -> RankedGraph


@dataclass(frozen=True)
class RankedGraph:
    """A data graph's adjacency by rank (arrays of the backend's array module).

    ``nbr`` int32[nnz] holds ranks, ``ptr`` int64[n * labels + 1] the run offsets, ``up`` int64[n * labels] the
    first entry of each run above its own vertex (a level above ``v_j`` reads ``N(v_j, e)`` from there: the
    degree-ordered orientation), ``vertex_labels`` int32[n] the label of each rank and ``max_run`` the longest run
    (the size a search's per-level buffers need).
    """

    n: int
    labels: int
    nbr: Any
    ptr: Any
    up: Any
    vertex_labels: Any
    max_run: int

    @property
    def nbytes(self) -> int:
        return int(self.nbr.nbytes + self.ptr.nbytes + self.up.nbytes + self.vertex_labels.nbytes)


def ranked_bytes(idx: DataIndex) -> int:
    """Bytes of the ranked copy of ``idx`` and of the sort that builds it (keys and their order, 16 per entry)."""
    nnz = int(idx.nbr.shape[0])
    return 4 * nnz + 16 * (idx.n * idx.num_labels + 1) + 4 * idx.n + 16 * nnz


def ranked_graph(xp: Any, idx: DataIndex) -> RankedGraph | None:
    """The :class:`RankedGraph` of ``idx`` built with ``xp`` (cached for the index's lifetime); None when the
    graph has more than :data:`MAX_RANKED_LABELS` effective edge labels."""
    cached = _RANKED.get(idx)
    if cached is not None:
        return cached
    if idx.num_labels > MAX_RANKED_LABELS:
        return None
    n, L = idx.n, idx.num_labels
    degrees = xp.asarray(idx.degrees).astype(xp.int64)
    order = xp.argsort(degrees * n + xp.arange(n, dtype=xp.int64))  # (degree, id): ties by id, deterministic
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64)
    nnz = int(idx.nbr.shape[0])
    src = xp.repeat(xp.arange(n, dtype=xp.int64), degrees)
    if L == 1:
        elab = xp.zeros(nnz, dtype=xp.int64)
    else:
        lengths = xp.asarray(idx.run_end) - xp.asarray(idx.run_start)
        elab = xp.repeat(xp.asarray(idx.run_keys) % L, lengths)
    keys = (rank[src] * L + elab) * n + rank[xp.asarray(idx.nbr).astype(xp.int64)]
    del src, elab
    keys.sort()
    nbr = (keys % n).astype(xp.int32)
    runs = keys // n
    del keys
    counts = xp.bincount(runs, minlength=n * L)
    ptr = xp.zeros(n * L + 1, dtype=xp.int64)
    xp.cumsum(counts, out=ptr[1:])
    up = ptr[:-1] + xp.bincount(runs[nbr <= runs // L], minlength=n * L)
    del runs
    labels = xp.empty(n, dtype=xp.int32)
    labels[rank] = xp.asarray(idx.vertex_labels).astype(xp.int32)
    max_run = int(counts.max()) if nnz else 0
    return _RANKED.put(idx, RankedGraph(n, L, nbr, ptr, up, labels, max_run))
