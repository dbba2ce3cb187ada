"""The depth-first set-intersection path of a count: for searches of low selectivity (few labels or none, where
breadth-first tables explode), symmetry broken inside the search.

A count takes this path (:meth:`~distsm.kernels.counting.Count.light`) when its semantics allow it
(:func:`unsupported`) and the *measured* selectivity of its query arcs is at least
``distsm.engine.dfs-selectivity`` (:func:`arc_selectivity`): the share of the adjacency entries of a sample of
``u``'s candidates that are candidates of ``w``, averaged geometrically over the query's arcs.  Labels that make
candidate sets small make that share small, whatever their number; a graph with one label has a share near 1.

The query is renumbered in a search order (:func:`~distsm.kernels.dfs_plan.search_order`) and its symmetry broken
there (``Symmetry.breaking``: the stabiliser chain's ``f(a) < f(b)`` pairs, GraphPi's and Peregrine's partial
order), so that every matched subgraph is counted once, on the data graph ranked by degree
(:mod:`distsm.kernels.ranked`); a count of embeddings multiplies by ``|Aut(Q)|``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm import caches
from distsm.graph import Graph
from distsm.kernels import array_ops as ops
from distsm.kernels import paths, wedges
from distsm.kernels.backend import Backend
from distsm.kernels.dfs_host import task_runs
from distsm.kernels.dfs_plan import DfsProgram, Pairs, program, renumbered, search_order, supported
from distsm.kernels.index import DataIndex
from distsm.kernels.order import query_adjacency
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.ranked import MAX_RANKED_LABELS, ranked_bytes, ranked_graph, slots_of
from distsm.kernels.records import Control

#: Candidates of each query vertex whose runs a selectivity sample reads.
SAMPLE_VERTICES = 256

#: Queries whose search programs are kept (:func:`planned`).
PROGRAMS_KEPT = 256
_PROGRAMS = caches.cache("search programs", "query structure and breaking -> (search order, DfsProgram, |Aut(Q)|)",
                         kept=PROGRAMS_KEPT)
_SELECTIVITY = caches.cache("measured selectivity", "DataIndex, query structure -> measured arc selectivity",
                            kept=PROGRAMS_KEPT)
_LOG_SHARES = caches.cache("label log-shares", "DataIndex -> vertex label -> log of the share of vertices with it")
_CUTS = caches.cache("search cuts", "DataIndex, (program, shortcut, per, most) -> task ranges and their work",
                     kept=PROGRAMS_KEPT)

#: Patterns counted without the search program, by what counts them: modules with ``applies(query,
#: edge_labels)``, ``count(backend, ranked, label, budget, control, task_range)`` and ``task_work(backend, ranked,
#: label)``, their tasks the ranks of the query's label.
SHORTCUTS: dict[str, Any] = {"a 4-cycle counted from its wedges": wedges,
                             "a 5-vertex path counted in closed form": paths}

#: How a count breaks the symmetry of a query renumbered for a search: its ``f(a) < f(b)`` pairs and ``|Aut(Q)|``.
Breaking = Callable[[Graph], tuple[Pairs, int]]


@dataclass(frozen=True)
class Search:
    """A count's search as chosen: the query's ``order`` (level -> query vertex), its ``program``, ``|Aut(Q)|``,
    whether the count is ``unique`` (else it multiplies by ``automorphisms``), the measured ``selectivity``
    that chose it (None where the search was forced), and the counting ``shortcut`` that counts the query instead
    of the program, if any (a name of :data:`SHORTCUTS`)."""

    order: tuple[int, ...]
    program: DfsProgram
    automorphisms: int
    unique: bool
    selectivity: float | None
    shortcut: str | None = None

    @property
    def factor(self) -> int:
        """What each subgraph the search finds counts for: 1 (unique) or ``|Aut(Q)|`` (embeddings)."""
        return 1 if self.unique else self.automorphisms


@dataclass(frozen=True)
class SearchShare:
    """A search cut into task ranges of about equal estimated work (:func:`cuts`) for several workers: each range
    is counted by :func:`count` with ``tasks=``, and the count is their sum."""

    ranges: tuple[tuple[int, int], ...]
    work: float
    reason: str

    def coarsened(self, pieces: int) -> SearchShare:
        """The same tasks in at most ``pieces`` ranges, adjacent ones joined (each holds about the same work, so
        the joined ones do too): fewer ranges cost a cluster fewer tasks, each with its own launches."""
        n = len(self.ranges)
        if pieces >= n or pieces < 1:
            return self
        bounds = [self.ranges[(i * n) // pieces][0] for i in range(pieces)] + [self.ranges[-1][1]]
        return SearchShare(tuple(zip(bounds[:-1], bounds[1:])), self.work,
                           f"{self.reason}, joined into {pieces}")


def unsupported(query: Graph, options: MatchOptions, idx: DataIndex, restricted: bool,
                breaking: Breaking | None, budget: int) -> str:
    """Why a count of ``query`` cannot take the search within ``budget`` bytes ("" when it can)."""
    if options.induced or options.homomorphism:
        return "induced and homomorphic counts take the joins"
    if restricted:
        return "restricted images take the joins"
    if breaking is None:
        return "no symmetry breaking was given"
    if idx.num_labels > MAX_RANKED_LABELS:
        return f"{idx.num_labels} effective edge labels (the ranked graph takes {MAX_RANKED_LABELS})"
    if ranked_bytes(idx) > budget // 2:
        return f"the ranked graph would need {ranked_bytes(idx)} bytes to build, over half the budget ({budget})"
    return supported(query)


def arc_selectivity(backend: Backend, idx: DataIndex, cands: Sequence[Any], query: Graph) -> float:
    """The geometric mean over the query's arcs ``(u, w, e)`` of the share of entries of ``N(v, e)``, ``v`` a
    strided sample of ``u``'s candidates (sorted arrays of ``backend``), that are candidates of ``w``."""
    logs = []
    for u, row in enumerate(query_adjacency(query)):
        cu = cands[u]
        step = max(1, int(cu.shape[0]) // SAMPLE_VERTICES)
        size = min(-(-int(cu.shape[0]) // step), SAMPLE_VERTICES)
        sample = ops.cast(ops.take(cu, ops.arange_like(cu, size, 0, step)), np.int64)
        for w, e in row:
            lo, hi = backend.run_bounds(idx, sample, e)
            _, entries = backend.gather_runs(idx.nbr, lo, ops.subtract(hi, lo))
            if not entries.shape[0]:
                return 0.0
            hit = ops.count_members(cands[w], entries)
            logs.append(math.log(max(hit, 1) / int(entries.shape[0])))
    return math.exp(sum(logs) / len(logs)) if logs else 0.0


def measured_selectivity(backend: Backend, idx: DataIndex, candidates: Callable[[], Sequence[Any]],
                         query: Graph) -> float:
    """:func:`arc_selectivity` of ``query`` on ``idx``, sampled once per index and query structure (the sample is
    strided, so a second one would measure the same): a repeated query skips the filter (``candidates`` is only
    called to sample) and the sample's launches and synchronisations, a third of a repeated triangle count's
    time on the R-MAT graphs of benchmarks/motifs.py."""
    return _SELECTIVITY.get_or(idx, lambda: arc_selectivity(backend, idx, candidates(), query), _structure(query))


def _structure(query: Graph) -> tuple:
    return (query.n, query.directed, query.edge_src.tobytes(), query.edge_dst.tobytes(), query.edge_labels.tobytes(),
            query.vertex_labels.tobytes())


def leaves(query: Graph) -> int:
    """Query vertices with one neighbour."""
    return sum(len({w for w, _ in row}) == 1 for row in query_adjacency(query))


def label_share(idx: DataIndex, query: Graph) -> float:
    """The geometric mean over the query's arcs ``(u, w)`` of the share of data vertices with ``w``'s label: what
    :func:`arc_selectivity` would measure if neighbours had the labels of random vertices (no device work)."""
    logs = _LOG_SHARES.get(idx)
    if logs is None:
        n = max(idx.n, 1)
        logs = _LOG_SHARES.put(idx, {int(x): math.log(int(v.shape[0]) / n) for x, v in idx.vertices_by_label.items()
                                     if v.shape[0]})
    # Each vertex w stands in the arcs (u, w) as often as its degree: one share per vertex, weighted by it.  The
    # degrees are read off the row pointers, not cached on the query: a count's query is most often a fresh graph.
    total = weight = 0.0
    ptr = query.indptr.tolist()
    for x, a, b in zip(query.vertex_labels.tolist(), ptr, ptr[1:]):
        if d := b - a:
            if x not in logs:
                return 0.0
            total += d * logs[x]
            weight += d
    return math.exp(total / weight) if weight else 0.0


def choose(query: Graph, idx: DataIndex, breaking: Breaking, unique: bool, selectivity: float | None) -> Search:
    """The search of ``query`` on the graph of ``idx``: its order, program (cached: :func:`planned`) and factor."""
    # Where the data graph has one vertex label (the query's: it has candidates), no level tests labels; where its
    # ranked runs are split by neighbour label, each level reads its own label's runs.
    order, prog, automorphisms = planned(query, breaking, len(idx.vertices_by_label) == 1, slots_of(idx))
    return Search(order, prog, automorphisms, unique, selectivity, shortcut_of(query, idx))


def shortcut_of(query: Graph, idx: DataIndex) -> str | None:
    """The name of the :data:`SHORTCUTS` entry that counts ``query`` on the graph of ``idx``, if any."""
    return next((name for name, how in SHORTCUTS.items() if how.applies(query, idx.num_labels)), None)


def count(backend: Backend, idx: DataIndex, search: Search, budget: int, control: Control | None = None,
          tasks: tuple[int, int] | None = None) -> int:
    """The count of ``search`` on the data graph of ``idx`` (held by ``backend``), its buffers and the ranked graph
    within ``budget`` bytes; ``tasks`` restricts it to a range of tasks (a slice of a :class:`SearchShare`);
    ``control`` may cancel between ranges of tasks."""
    graph = ranked_graph(backend.xp, idx)
    assert graph is not None  # unsupported() checked the label count
    budget = max(budget - graph.nbytes, budget // 4)
    if search.shortcut is not None:
        how = SHORTCUTS[search.shortcut]
        return search.factor * how.count(backend, graph, _first_label(search), budget, control, tasks)
    return search.factor * backend.dfs_count(graph, search.program, budget, control, tasks)


def _first_label(search: Search) -> int:
    return int(search.program.level(0)[0])


def task_work(backend: Backend, idx: DataIndex, search: Search) -> Any:
    """The estimated work of each task (float64, in task order): one, plus the entries of the shortest run level
    2 starts from (cut at its own vertex where level 2 lies above it) times the levels below it.  It ranks tasks
    and cuts ranges; it is no count of what a task reads: a unit's device time varies by over an order of
    magnitude between patterns (little work per entry under a pair tail, deeper levels it does not see), about
    what one unit of the planner's host work takes on NumPy within a factor of 15 either way, so the two compare as
    they are.  A cost model that sees the deeper levels is still to come.  A count by a shortcut takes its own
    (:data:`SHORTCUTS`)."""
    g = ranked_graph(backend.xp, idx)
    assert g is not None
    if search.shortcut is not None:
        return SHORTCUTS[search.shortcut].task_work(backend, g, _first_label(search))
    prog = search.program
    runs = task_runs(g, prog)
    if prog.levels == 2:
        return ops.ones(g.ptr, runs.total)
    # Every task's two images: its run's entries laid end to end are the tasks, in order.
    row, v1 = backend.gather_runs(g.nbr, runs.start, runs.lengths)
    images = (ops.take(runs.verts, row), v1)
    level = prog.level(2)
    shortest = None
    for j in (0, 1):
        if level[1] >> j & 1:
            run = ops.affine(images[j], g.labels, int(level[7 + j]))
            _, length = ops.spans(g.up if level[2] >> j & 1 else g.ptr, g.ptr[1:], run)
            shortest = length if shortest is None else ops.minimum(shortest, length)
    assert shortest is not None  # level 2 has an earlier neighbour
    return ops.poly2(ops.cast(shortest, np.float64), 1.0, float(prog.levels - 2), 0.0)


def cuts(backend: Backend, idx: DataIndex, search: Search, per: float,
         most: int) -> tuple[tuple[tuple[int, int], ...], float]:
    """Task ranges of about equal :func:`task_work`, one per ``per`` of it (at least two, at most ``most``; fewer
    where tasks run out), and the total work; kept per index and search, since the work of every task is read
    while the cluster waits (a 4-cycle's or 5-path's lists every task's wedges)."""

    def compute() -> tuple[tuple[tuple[int, int], ...], float]:
        work = ops.cumsum(task_work(backend, idx, search))
        total = float(work[-1]) if work.shape[0] else 0.0
        pieces = max(2, min(most, math.ceil(total / max(per, 1.0))))
        marks = ops.search_left(work, np.asarray([total * i / pieces for i in range(1, pieces)]))
        bounds = sorted({0, *(int(b) for b in marks.tolist()), int(work.shape[0])})
        return tuple(zip(bounds[:-1], bounds[1:])), total

    return _CUTS.get_or(idx, compute, (search.program.words.tobytes(), search.shortcut, per, most))


def planned(query: Graph, breaking: Breaking, any_label: bool,
            slots: tuple[int, ...] = ()) -> tuple[tuple[int, ...], DfsProgram, int]:
    """``query``'s search order, program and ``|Aut(Q)|``, kept for the last :data:`PROGRAMS_KEPT` queries by their
    structure (the stabiliser chain costs 6-17 ms for a 3- to 5-clique on the CPU: more than a triangle count)."""
    def compute() -> tuple[tuple[int, ...], DfsProgram, int]:
        order = search_order(query)
        q = renumbered(query, order)
        less_than, automorphisms = breaking(q)
        return tuple(order), program(q, less_than, any_label=any_label, slots=slots), automorphisms

    found: tuple[tuple[int, ...], DfsProgram, int] = _PROGRAMS.get_or(
        caches.GLOBAL, compute, (any_label, slots, breaking, *_structure(query)))
    return found

