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
a triangle or a wedge, where the search would walk every path (tens of seconds on the R-MAT graphs of
``benchmarks/motifs.py``).

With a vertex label every term is taken in the subgraph its vertices induce.  Tasks are those of the wedges (the
label's ranks, ascending); a range of them takes the ``W`` terms of its middles and the 4-cycles of its highest
vertices, and the triangles of the lowest vertices in the range of ranks that holds the same share of the
triangles' work as the range holds of the wedges' (:class:`_Terms`), so that ranges add up to the whole (each
part's numerator is even) and each range's share of both passes follows the share of work it was cut for.  A
range's part is then no count of its own and may be negative; only the whole is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm import caches
from distsm.graph import Graph
from distsm.kernels import array_ops as ops
from distsm.kernels import wedges
from distsm.kernels.array_ops import bincount
from distsm.kernels.backend import Backend
from distsm.kernels.dfs_host import row_chunks, task_runs
from distsm.kernels.dfs_plan import DfsProgram, program
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.records import Control

#: Bytes per gathered entry while ``W`` is summed (its row, neighbour, value and running sums).
ENTRY_BYTES = 40

#: Tasks per block of the running triangle work that matches a range of wedge tasks with its triangles' ranks,
#: kept on the host at one entry a block.  The wedges' running work is kept whole: a few tasks (the hubs' ranks)
#: hold most of it.
WORK_BLOCK = 16

_TERMS = caches.cache("5-path terms", "RankedGraph, label -> _Terms (tasks, degrees less one, triangle program, "
                                     "its task ends, running wedge work per task and triangle work per block)")


@dataclass(frozen=True)
class _Terms:
    """What every range of one graph and label shares: the tasks (``verts``, ranks of the label), each rank's
    degree less one (``weights``), the ``triangle`` program and its running task count per task (``ends``), the
    running wedge work before each task, then the whole (``wedge_work``), and the running triangle work before
    each block of :data:`WORK_BLOCK` tasks, then the whole (``triangle_work``), both on the host (float64)."""

    verts: Any
    weights: Any
    triangle: DfsProgram
    ends: Any
    wedge_work: np.ndarray
    triangle_work: np.ndarray

    def triangle_task(self, at: int) -> int:
        """The first triangle task of a range of wedge tasks that starts at ``at`` (0 to the number of tasks): the
        start of the block of ranks whose running triangle work first reaches the share of the wedges' work
        done before ``at``.  Non-decreasing in ``at``, 0 at 0 and every triangle task at the end."""
        n = int(self.verts.shape[0])
        if at >= n:
            return int(self.ends[n - 1]) if n else 0
        share = self.wedge_work[at] / self.wedge_work[-1]
        block = int(np.searchsorted(self.triangle_work, share * self.triangle_work[-1], side="left"))
        rank = min(block * WORK_BLOCK, n)
        return int(self.ends[rank - 1]) if rank else 0


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
    most about ``budget`` bytes at a time; ``task_range`` restricts it to a range of the wedges' tasks, whose part
    the parts of the other ranges complete (see the module docstring); ``control`` may cancel between parts."""
    terms = _terms(backend, g, label)
    lo, hi = task_range if task_range is not None else (0, int(terms.verts.shape[0]))
    walks = _walks(backend, g, label, terms.weights, terms.verts[lo:hi], budget)
    if control is not None:
        control.check()
    tasks = (terms.triangle_task(lo), terms.triangle_task(hi))
    triangles = backend.dfs_count(g, terms.triangle, budget, control, tasks)
    weighed = backend.dfs_weigh(g, terms.triangle, terms.weights, budget, tasks)
    cycles = wedges.count(backend, g, label, budget, control, (lo, hi))
    twice = walks - 4 * weighed - 8 * cycles + 6 * triangles
    assert twice % 2 == 0 and (twice >= 0 or task_range is not None), twice
    return twice // 2


def task_work(backend: Backend, g: RankedGraph, label: int) -> Any:
    """The estimated work of each task (float64): its wedges' (:func:`distsm.kernels.wedges.task_work`), which
    outnumber its runs' entries and triangles."""
    return wedges.task_work(backend, g, label)


def _terms(backend: Backend, g: RankedGraph, label: int) -> _Terms:
    """The :class:`_Terms` of ``g`` and ``label``: kept per ranked graph and label, since a cluster counts a query
    in dozens of task ranges and each would rebuild them over the whole graph.  A task's triangle work is the
    square of its run above itself, which the triangle count reads (and the weights again)."""
    def compute() -> _Terms:
        triangle = _triangle(g, label)
        weights = ops.affine(_degrees(backend, g, label), 1, -1, 0)
        verts = wedges.tasks(g, label)
        _, above = ops.spans(g.up, g.ptr[1:], _runs(g, label, verts))
        return _Terms(verts, weights, triangle, task_runs(g, triangle).ends,
                      _running(backend, wedges.task_work(backend, g, label), 1),
                      _running(backend, ops.poly2(ops.cast(above, np.float64), 1.0, 0.0, 1.0), WORK_BLOCK))

    found: _Terms = _TERMS.get_or(g, compute, label)
    return found


def _running(backend: Backend, work: Any, block: int) -> np.ndarray:
    """The running sums of ``work`` (float64) before each block of ``block`` entries, then the whole, on the
    host."""
    running = ops.cumsum(work)
    n = int(work.shape[0])
    ends = ops.arange_like(work, max(-(-(n - block) // block), 0), block - 1, block)  # block - 1, ... below n - 1
    total = float(running[-1]) if n else 0.0
    return np.concatenate(([0.0], backend.to_host(ops.take(running, ends)), [total]))


def _runs(g: RankedGraph, label: int, v: Any) -> Any:
    """The run of each rank of ``v`` that holds its neighbours of ``label`` (its only run where there is one)."""
    return ops.affine(v, g.labels, (g.run_offset(0, label) or 0) if label >= 0 else 0)


def _tested(g: RankedGraph, label: int) -> bool:
    """Whether neighbours' labels must be tested (a label on a graph whose runs are not split by label)."""
    return label >= 0 and not g.slots


def _degrees(backend: Backend, g: RankedGraph, label: int) -> Any:
    """Each rank's number of neighbours of ``label`` (int64; all of them for -1)."""
    start, length = ops.spans(g.ptr, g.ptr[1:], _runs(g, label, ops.arange_like(g.ptr, g.n)))
    if not _tested(g, label):
        return length
    row, b = backend.gather_runs(g.nbr, start, length)
    return bincount(ops.take(row, ops.positions_of(ops.take(g.vertex_labels, b), label)), g.n)


def _walks(backend: Backend, g: RankedGraph, label: int, weights: Any, middles: Any, budget: int) -> int:
    """``W`` over the middles ``middles``, by chunks of their runs: each neighbour's ``d - 1`` (``weights``) summed
    per middle (uint64: exact while each middle's sum of squares is below 2^64)."""
    start, length = ops.spans(g.ptr, g.ptr[1:], _runs(g, label, middles))
    tested = label if _tested(g, label) else -1
    return sum(ops.walk_sums(g.nbr, start[a:b], length[a:b], weights, g.vertex_labels, tested)
               for a, b in row_chunks(length, max(budget // ENTRY_BYTES, 1)))


def _triangle(g: RankedGraph, label: int) -> DfsProgram:
    """The search program of a triangle of ``label`` (-1: any) on ``g``, its vertices in rank order."""
    query = Graph.from_edges([(0, 1), (1, 2), (0, 2)], vertex_labels=[max(label, 0)] * 3)
    return program(query, ((0, 1), (1, 2)), any_label=label < 0, slots=g.slots)
