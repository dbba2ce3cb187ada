"""The data graph renumbered by degree, for the depth-first set-intersection search (:mod:`distsm.kernels.dfs`).

Vertices get ranks in order of (degree, id), and each vertex's adjacency is stored as runs sorted by rank, one per
effective edge label ``e`` and, where the graph has several vertex labels, per label of the neighbour (its *slot*
``s``): ``nbr[ptr[r]:ptr[r + 1]]`` with ``r = v * R + e * S + s`` holds ``v``'s neighbours of label ``slots[s]`` by
edges of label ``e`` (``R = L * S`` runs per vertex; ``S = 1`` and no slots where the graph has one vertex label).
A level of the search then reads only the neighbours of its own label, instead of reading all and testing each.
Symmetry breaking compares images (``f(a) < f(b)``), and any total order of the data vertices keeps one embedding
per matched subgraph; comparing ranks makes the first vertices of a search the low-degree ones, so a search that
starts from ``v`` with its later vertices above ``v`` reads only the part of each run above ``v`` (a binary search
cuts it): the degree-ordered orientation G2Miner and GraphPi use for cliques, for every pattern.  The runs are
indexed directly (``n * R + 1`` offsets): runs are split by neighbour label only while ``R`` stays within
:data:`MAX_RANKED_LABELS`, and graphs with more effective edge labels than that are not ranked at all (at those
label counts the search is selective and the breadth-first join serves it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import bincount, stable_order
from distsm.kernels.index import DataIndex, entry_run_keys
from distsm import caches

#: Runs per vertex a ranked copy holds at most (its offsets grow with ``n * R``): edge labels beyond it give no
#: ranked copy, and vertex labels that would pass it leave the runs unsplit.
MAX_RANKED_LABELS = 16

_RANKED = caches.cache("ranked graphs", "DataIndex -> its adjacency ranked by degree (RankedGraph)")


@dataclass(frozen=True)
class RankedGraph:
    """A data graph's adjacency by rank (arrays of the backend's array module).

    ``labels`` is the number ``R`` of runs per vertex and ``slots`` the vertex label of each neighbour slot (empty
    where runs are not split by neighbour label); ``nbr`` int32[nnz] holds ranks, ``ptr`` int64[n * R + 1] the run
    offsets, ``up`` int64[n * R] the first entry of each run above its own vertex (a level above ``v_j`` reads
    ``N(v_j, e)`` from there: the degree-ordered orientation), ``vertex_labels`` int32[n] the label of each rank
    and ``max_run`` the longest run (the size a search's per-level buffers need).
    """

    n: int
    labels: int
    nbr: Any
    ptr: Any
    up: Any
    vertex_labels: Any
    max_run: int
    slots: tuple[int, ...] = ()

    def run_offset(self, edge_label: int, vertex_label: int) -> int | None:
        """The offset within a vertex's runs of its neighbours of ``vertex_label`` by edges of ``edge_label``
        (the edge label's run where runs are not split), or None when no vertex has that label."""
        if not self.slots:
            return edge_label
        if vertex_label not in self.slots:
            return None
        return edge_label * len(self.slots) + self.slots.index(vertex_label)

    @property
    def nbytes(self) -> int:
        return int(self.nbr.nbytes + self.ptr.nbytes + self.up.nbytes + self.vertex_labels.nbytes)


def slot_count(idx: DataIndex) -> int:
    """How many neighbour slots ``idx``'s ranked copy has (:func:`slots_of`), without listing them."""
    labels = len(idx.vertices_by_label)
    return labels if 1 < labels and idx.num_labels * labels <= MAX_RANKED_LABELS else 0


def slots_of(idx: DataIndex) -> tuple[int, ...]:
    """The neighbour slots of ``idx``'s ranked copy: its vertex labels, ascending, where there are several and
    ``num_labels * len(slots)`` runs per vertex stay within :data:`MAX_RANKED_LABELS`; else none."""
    return tuple(sorted(int(x) for x in idx.vertices_by_label)) if slot_count(idx) else ()


def _sub_run(xp: Any, idx: DataIndex, slots: tuple[int, ...]) -> Any | None:
    """Each entry's run within its vertex's runs (int32): ``e * S + s`` for its edge label ``e`` and its neighbour's
    slot ``s``; None where every vertex has one run."""
    sub = None
    if idx.num_labels > 1:
        sub = ops.divmod_keys(entry_run_keys(idx, xp), idx.num_labels)[1]
    if slots:
        # Labels are small non-negative codes: a table from label to slot, built on the host.
        table = np.searchsorted(np.asarray(slots), np.arange(max(max(slots), 0) + 1)).astype(np.int32)
        slot = ops.take(xp.asarray(table), ops.take(ops.cast(xp.asarray(idx.vertex_labels), np.int32), idx.nbr))
        sub = slot if sub is None else ops.cast(ops.scaled_add(ops.cast(sub, np.int64), len(slots), slot), np.int32)
    return sub


def ranked_bytes(idx: DataIndex) -> int:
    """Bytes of the ranked copy of ``idx`` and of the sort that builds it (keys and their order, 16 per entry)."""
    nnz = int(idx.nbr.shape[0])
    runs = idx.n * idx.num_labels * max(slot_count(idx), 1)
    return 4 * nnz + 16 * (runs + 1) + 4 * idx.n + 16 * nnz


def ranked_graph(xp: Any, idx: DataIndex) -> RankedGraph | None:
    """The :class:`RankedGraph` of ``idx`` built with ``xp`` (cached for the index's lifetime); None when the
    graph has more than :data:`MAX_RANKED_LABELS` effective edge labels."""
    cached = _RANKED.get(idx)
    if cached is not None:
        return cached
    if idx.num_labels > MAX_RANKED_LABELS:
        return None
    n, L = idx.n, idx.num_labels
    degrees = ops.cast(xp.asarray(idx.degrees), np.int64)
    # Ranks by (degree, id): a stable sort of the degrees keeps ties in id order, deterministic.
    rank = ops.inverse_permutation(stable_order(degrees, ops.max_value(degrees) + 1))
    nnz = int(idx.nbr.shape[0])
    nbr_rank = ops.cast(ops.take(rank, xp.asarray(idx.nbr)), np.int32)  # ranks are below n < 2^31
    slots = slots_of(idx)
    S = max(len(slots), 1)
    R = L * S
    key = ops.take(rank, ops.expand(degrees)[0])  # each entry's source, by rank
    sub = _sub_run(xp, idx, slots)
    if sub is not None:
        key = ops.scaled_add(key, R, sub)
    del sub
    keys = ops.scaled_add(key, n, nbr_rank)
    del key, nbr_rank
    ops.sort_inplace(keys)
    runs, nbr = ops.divmod_keys(keys, n)
    del keys
    counts = bincount(runs, n * R)
    del runs
    ptr = xp.zeros(n * R + 1, dtype=xp.int64)
    ops.cumsum(counts, out=ptr[1:])
    up = ops.run_upper(ptr, nbr, R)
    labels = ops.scatter(rank, ops.cast(xp.asarray(idx.vertex_labels), np.int32), n)
    max_run = ops.max_value(counts) if nnz else 0
    return _RANKED.put(idx, RankedGraph(n, R, nbr, ptr, up, labels, max_run, slots))
