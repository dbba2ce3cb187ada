"""Paths of five vertices counted in closed form, a counting shortcut of the depth-first search
(:mod:`distsm.kernels.dfs`), like the wedge count of 4-cycles (:mod:`distsm.kernels.wedges`).

On a simple undirected graph with degrees ``d``, the walks ``a-b-c-d-e`` whose middle ``c`` has two distinct
neighbours ``b, d``, ``a`` a neighbour of ``b`` other than ``c`` and ``e`` one of ``d`` other than ``c``, number

    ``W = sum over c of (s1(c)^2 - s2(c))``,  ``s1(c) = sum over b in N(c) of (d(b) - 1)``, ``s2`` the same of squares.

Those are paths unless ``a = d`` (a triangle ``b, c, d``), ``e = b`` (the same) or ``a = e`` (a 4-cycle); by
inclusion and exclusion (no two of these but the first two can hold at once, and those two together once per
ordered edge within a neighbourhood), the paths, each found from both ends, number

    ``P = (W - 4 S - 8 C4 + 6 T) / 2``,  ``S = sum over triangles of the sum of (d(v) - 1) over their vertices``,

``T`` the triangles and ``C4`` the 4-cycles.  ``T`` and ``S`` come from a triangle search (its matches counted,
then weighed by ``d - 1``), ``C4`` from the wedges, ``W`` from one pass over the runs: nothing is enumerated past
a triangle or a wedge, where the search would walk every path (over 44 s on the 16M-edge R-MAT graph of
``benchmarks/motifs.py`` on an H200).

With a vertex label every term is taken in the subgraph its vertices induce.  Tasks are those of the wedges (the
label's ranks, ascending); a range of them takes the ``W`` terms of its middles, the triangles of its lowest
vertices and the 4-cycles of its highest, so that ranges add up to the whole (each part's numerator is even).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm import caches
from distsm.graph import Graph
from distsm.kernels import wedges
from distsm.kernels.backend import Backend
from distsm.kernels.dfs_host import row_chunks, task_runs
from distsm.kernels.dfs_plan import DfsProgram, program
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.records import Control

#: Bytes per gathered entry while ``W`` is summed (its row, neighbour, value and running sums).
ENTRY_BYTES = 40

_TERMS = caches.cache("5-path terms", "RankedGraph, label -> (tasks, degrees less one, triangle program, its task "
                                     "ends)")


def applies(query: Graph, edge_labels: int) -> bool:
    """Whether the count of ``query`` is this closed form: an undirected path of five vertices, one vertex label
    and one edge label, on a ranked graph of ``edge_labels`` effective edge labels (one: undirected, unlabelled
    edges)."""
    if query.directed or query.n != 5 or query.m != 4 or edge_labels != 1:
        return False
    if len(set(query.vertex_labels.tolist())) != 1 or len(set(query.edge_labels.tolist())) != 1:
        return False
    src, dst = query.edge_src.tolist(), query.edge_dst.tolist()
    degree = [0] * 5
    for u, w in zip(src, dst):
        degree[u] += 1
        degree[w] += 1
    # Four edges on five vertices, degrees 1, 1, 2, 2, 2 and connected: a path (a triangle plus an edge would
    # leave a vertex of degree 0).
    return sorted(degree) == [1, 1, 2, 2, 2] and query.is_connected()


def count(backend: Backend, g: RankedGraph, label: int, budget: int, control: Control | None = None,
          task_range: tuple[int, int] | None = None) -> int:
    """The number of 5-vertex paths (each once) whose vertices have label ``label`` (-1: any) on ``g``, holding at
    most about ``budget`` bytes at a time; ``task_range`` restricts it to a range of the wedges' tasks (see the
    module docstring); ``control`` may cancel between parts."""
    verts, weights, triangle, ends = _terms(backend, g, label)
    lo, hi = task_range if task_range is not None else (0, int(verts.shape[0]))
    walks = _walks(backend, g, label, weights, verts[lo:hi], budget)
    if control is not None:
        control.check()
    tasks = (int(ends[lo - 1]) if lo else 0, int(ends[hi - 1]) if hi else 0)
    triangles = backend.dfs_count(g, triangle, budget, control, tasks)
    weighed = backend.dfs_weigh(g, triangle, weights, budget, tasks)
    cycles = wedges.count(backend, g, label, budget, control, (lo, hi))
    twice = walks - 4 * weighed - 8 * cycles + 6 * triangles
    assert twice % 2 == 0 and twice >= 0, twice
    return twice // 2


def task_work(backend: Backend, g: RankedGraph, label: int) -> Any:
    """The estimated work of each task (float64): its wedges' (:func:`distsm.kernels.wedges.task_work`), which
    outnumber its runs' entries and triangles."""
    return wedges.task_work(backend, g, label)


def _terms(backend: Backend, g: RankedGraph, label: int) -> tuple[Any, Any, DfsProgram, Any]:
    """The tasks (ranks of ``label``), each rank's degree less one (at least 0), the triangle program and its
    tasks' running count per rank of ``label``: kept per ranked graph and label, since a cluster counts a query in
    dozens of task ranges and each would rebuild them over the whole graph."""
    def compute() -> tuple[Any, Any, DfsProgram, Any]:
        xp = backend.xp
        triangle = _triangle(g, label)
        weights = xp.maximum(_degrees(backend, g, label) - 1, 0)
        return wedges.tasks(xp, g, label), weights, triangle, task_runs(xp, g, triangle).ends

    found: tuple[Any, Any, DfsProgram, Any] = _TERMS.get_or(g, compute, label)
    return found


def _runs(g: RankedGraph, label: int, v: Any) -> Any:
    """The run of each rank of ``v`` that holds its neighbours of ``label`` (its only run where there is one)."""
    return v.astype(np.int64) * g.labels + ((g.run_offset(0, label) or 0) if label >= 0 else 0)


def _tested(g: RankedGraph, label: int) -> bool:
    """Whether neighbours' labels must be tested (a label on a graph whose runs are not split by label)."""
    return label >= 0 and not g.slots


def _degrees(backend: Backend, g: RankedGraph, label: int) -> Any:
    """Each rank's number of neighbours of ``label`` (int64; all of them for -1)."""
    xp = backend.xp
    run = _runs(g, label, xp.arange(g.n, dtype=xp.int64))
    if not _tested(g, label):
        return (g.ptr[run + 1] - g.ptr[run]).astype(xp.int64)
    row, b = backend.gather_runs(g.nbr, g.ptr[run], g.ptr[run + 1] - g.ptr[run])
    return xp.bincount(row[g.vertex_labels[b] == label], minlength=g.n).astype(xp.int64)


def _walks(backend: Backend, g: RankedGraph, label: int, weights: Any, middles: Any, budget: int) -> int:
    """``W`` over the middles ``middles``, by chunks of their runs: each neighbour's ``d - 1`` (``weights``) summed
    per middle by differences of running sums (uint64: exact while each middle's sum of squares is below 2^64)."""
    xp = backend.xp
    run = _runs(g, label, middles)
    start, length = g.ptr[run], g.ptr[run + 1] - g.ptr[run]
    total = 0
    for a, b in row_chunks(xp, length, max(budget // ENTRY_BYTES, 1)):
        _, nb = backend.gather_runs(g.nbr, start[a:b], length[a:b])
        value = weights[nb].astype(xp.uint64)
        if _tested(g, label):
            value *= (g.vertex_labels[nb] == label).astype(xp.uint64)
        firsts = xp.concatenate((xp.zeros(1, dtype=xp.int64), xp.cumsum(length[a:b])))
        s1 = _segment_sums(xp, value, firsts)
        s2 = _segment_sums(xp, value * value, firsts)
        total += int((s1 * s1 - s2).sum())
    return total


def _segment_sums(xp: Any, values: Any, firsts: Any) -> Any:
    """The sums of ``values`` between consecutive ``firsts`` (uint64)."""
    running = xp.concatenate((xp.zeros(1, dtype=xp.uint64), xp.cumsum(values, dtype=xp.uint64)))
    return running[firsts[1:]] - running[firsts[:-1]]


def _triangle(g: RankedGraph, label: int) -> DfsProgram:
    """The search program of a triangle of ``label`` (-1: any) on ``g``, its vertices in rank order."""
    query = Graph.from_edges([(0, 1), (1, 2), (0, 2)], vertex_labels=[max(label, 0)] * 3)
    return program(query, ((0, 1), (1, 2)), any_label=label < 0, slots=g.slots)
