"""4-cycles counted from their wedges, a counting shortcut of the depth-first search (:mod:`distsm.kernels.dfs`).

A 4-cycle ``a-b-c-d-a`` is found once when ``a`` is its highest-ranked vertex (ranks follow degree:
:mod:`distsm.kernels.ranked`), ``c`` the vertex opposite ``a`` and ``{b, d}`` an unordered pair of common neighbours
of ``a`` and ``c``.  Every other vertex ranks below ``a``, so the unique count is

    sum over pairs (a, c), c < a, of C(w(a, c), 2),  w(a, c) = |{b in N(a) ∩ N(c) : b < a}|,

and ``w`` counts the *wedges* ``a-b-c`` with ``b, c < a``.  Each wedge is listed once as the key ``(a, c)``, the keys
sorted, and every run of equal keys gives one ``w``: nothing is intersected (Chiba and Nishizeki's count, with a
sort in place of their per-vertex map).  With ``a`` the highest rank the wedges are the degree-ordered few: 2.7e9
on the 16M-edge R-MAT graph of ``benchmarks/motifs.py``, against 1.9e10 searches of ``N(a) ∩ N(c)`` from the
lowest-ranked vertex, which cost 1.9e11 lookups.

Tasks are the candidates of ``a`` (ranks of the query's vertex label, ascending): a cluster cuts ranges of them by
:func:`task_work`, the wedges each lists.  Chunks hold whole keys: a range of tasks, or one task's wedges to a
range of ``c`` where its wedges alone outgrow the budget, so any budget counts exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import bincount
from distsm.kernels.backend import Backend
from distsm.kernels.dfs_host import row_chunks, run_keys
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.records import Control

#: Bytes per listed wedge at a chunk's peak (its position, row and run start, its key, and the sort's copy).
WEDGE_BYTES = 48

#: Wedges a chunk holds at least, whatever the budget (a smaller chunk costs more in launches than it saves).
MIN_CHUNK = 1 << 6


def applies(query: Graph, edge_labels: int) -> bool:
    """Whether the count of ``query`` is the wedge count: an undirected 4-cycle of one vertex label and one edge
    label, on a ranked graph of ``edge_labels`` effective edge labels (one: undirected, unlabelled edges)."""
    if query.directed or query.n != 4 or query.m != 4 or edge_labels != 1:
        return False
    if len(set(query.vertex_labels.tolist())) != 1 or len(set(query.edge_labels.tolist())) != 1:
        return False
    degree = [0] * 4
    for u, w in zip(query.edge_src.tolist(), query.edge_dst.tolist()):
        if u == w:
            return False
        degree[u] += 1
        degree[w] += 1
    # Four distinct edges on four vertices, each of degree two, form one 4-cycle (two disjoint 2-cycles need
    # repeated edges).
    return degree == [2, 2, 2, 2] and len({frozenset(e) for e in zip(query.edge_src.tolist(),
                                                                      query.edge_dst.tolist())}) == 4


def tasks(g: RankedGraph, label: int) -> Any:
    """The ranks that may be ``a`` (int64, ascending): all, or those of vertex label ``label`` (-1: any)."""
    if label < 0:
        return ops.arange_like(g.ptr, g.n)
    return ops.positions_of(g.vertex_labels, label)


class _Wedges:
    """The wedges of a graph and label: listing, counting and summing them by chunks."""

    def __init__(self, backend: Backend, g: RankedGraph, label: int) -> None:
        self.backend, self.xp, self.g, self.label = backend, backend.xp, g, label
        self.keys = run_keys(self.xp, g)
        # The runs read: the label's own where runs are split by neighbour label (nothing to test), else the one
        # run of each vertex, tested where a label is set.
        if label < 0 and g.slots:
            raise ValueError("a graph whose runs are split by neighbour label has no 4-cycles of any label: name one")
        self.offset = (g.run_offset(0, label) or 0) if label >= 0 else 0
        self.tested = label >= 0 and not g.slots

    def _run(self, v: Any) -> Any:
        return ops.affine(v, self.g.labels, self.offset)

    def _of_label(self, *arrays: Any) -> tuple[Any, ...]:
        """``arrays`` (the last of them ranks) cut to the entries whose rank has the label, where it is tested."""
        if not self.tested:
            return arrays
        keep = ops.positions_of(ops.take(self.g.vertex_labels, arrays[-1]), self.label)
        return tuple(ops.take(x, keep) for x in arrays)

    def _down(self, a: Any) -> tuple[Any, Any]:
        """``(row, b)``: every neighbour ``b`` of each ``a[row]`` ranked below it (of the label, where one is set)."""
        g = self.g
        start, length = ops.spans(g.ptr, g.up, self._run(a))
        row, b = self.backend.gather_runs(g.nbr, start, length)
        return self._of_label(row, b)

    def _runs(self, a: Any, b: Any, c0: int, c1: int) -> tuple[Any, Any]:
        """For edges ``a-b``: the start and length of the part of ``N(b)`` with ``c0 <= c < min(a, c1)``."""
        g = self.g
        return ops.key_ranges(self.keys, ops.affine(b, g.labels * g.n, self.offset * g.n), a, c0, c1)

    def per_task(self, a: Any, most: int) -> Any:
        """The wedges each of ``a`` lists (float64), read by blocks of at most ``most`` edges."""
        g = self.g
        out = self.xp.zeros(a.shape[0], dtype=self.xp.float64)
        _, width = ops.spans(g.ptr, g.up, self._run(a))
        for t0, t1 in row_chunks(width, most):
            row, b = self._down(a[t0:t1])
            _, length = self._runs(ops.take(a[t0:t1], row), b, 0, self.g.n)
            ops.copy_into(out[t0:t1], bincount(row, t1 - t0, ops.cast(length, np.float64)))
        return out

    def pairs(self, a: Any, c0: int = 0, c1: int | None = None) -> int:
        """``sum C(w(a, c), 2)`` over ``a`` (several ranks, or one) and ``c0 <= c < c1``, one chunk."""
        g = self.g
        row, b = self._down(a)
        start, length = self._runs(ops.take(a, row), b, c0, g.n if c1 is None else c1)
        entry, c = self.backend.gather_runs(g.nbr, start, length)
        del start, length
        owner, c = self._of_label(ops.take(row, entry), c)
        del entry, row, b
        if not c.shape[0]:
            return 0
        key = ops.scaled_add(owner, g.n, c)
        del owner, c
        ops.sort_inplace(key)
        return ops.equal_pairs(key)

    def split(self, a: Any, wedges: int, cap: int) -> Iterator[tuple[int, int]]:
        """Ranges ``[c0, c1)`` of the opposite vertex that cut the ``wedges`` of the one task ``a`` (an array of one
        rank) into pieces of at most ``cap`` (halving the range: the wedges bunch on the high ranks)."""
        row, b = self._down(a)
        stack = [(0, int(a[0]), wedges)]
        while stack:
            c0, c1, have = stack.pop()
            if have <= cap or c1 - c0 == 1:
                yield c0, c1
                continue
            mid = (c0 + c1) // 2
            _, low = self._runs(ops.take(a, row), b, c0, mid)
            below = int(ops.cumsum(low)[-1]) if low.shape[0] else 0
            stack.append((mid, c1, have - below))
            stack.append((c0, mid, below))


def task_work(backend: Backend, g: RankedGraph, label: int) -> Any:
    """The estimated work of each task (float64, in task order): one plus the wedges it lists."""
    a = tasks(g, label)
    return ops.poly2(_Wedges(backend, g, label).per_task(a, 1 << 26), 1.0, 1.0, 0.0)


def count(backend: Backend, g: RankedGraph, label: int, budget: int, control: Control | None = None,
          task_range: tuple[int, int] | None = None) -> int:
    """The number of 4-cycles (each once) whose vertices have label ``label`` (-1: any) on ``g``, within ``budget``
    bytes of listed wedges; ``task_range`` restricts ``a`` to a range of :func:`tasks`; ``control`` may cancel
    between chunks and hears progress in tasks."""
    wedges = _Wedges(backend, g, label)
    a = tasks(g, label)
    if task_range is not None:
        a = a[task_range[0]:task_range[1]]
    cap = max(budget // WEDGE_BYTES, MIN_CHUNK)
    per_task = wedges.per_task(a, cap)
    total, done = 0, 0
    for t0, t1 in row_chunks(per_task, cap):
        if control is not None:
            control.check()
        if t1 - t0 == 1 and float(per_task[t0]) > cap:
            for c0, c1 in wedges.split(a[t0:t1], int(per_task[t0]), cap):
                total += wedges.pairs(a[t0:t1], c0, c1)
        else:
            total += wedges.pairs(a[t0:t1])
        done = t1
        if control is not None and control.progress is not None:
            control.progress(done, int(a.shape[0]))
    return total
