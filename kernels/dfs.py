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
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.dfs_plan import DfsProgram, Pairs, program, renumbered, search_order, supported
from distsm.kernels.index import DataIndex
from distsm.kernels.order import query_adjacency
from distsm.kernels.query_plan import MatchOptions
from distsm.kernels.ranked import MAX_RANKED_LABELS, ranked_bytes, ranked_graph
from distsm.kernels.records import Control

#: Candidates of each query vertex whose runs a selectivity sample reads.
SAMPLE_VERTICES = 256

#: Queries whose search programs are kept (:func:`planned`).
PROGRAMS_KEPT = 256
_PROGRAMS: OrderedDict[tuple, tuple[tuple[int, ...], DfsProgram, int]] = OrderedDict()
_PROGRAMS_LOCK = threading.Lock()

#: How a count breaks the symmetry of a query renumbered for a search: its ``f(a) < f(b)`` pairs and ``|Aut(Q)|``.
Breaking = Callable[[Graph], tuple[Pairs, int]]


@dataclass(frozen=True)
class DfsCount:
    """A count by the search: ``total`` (embeddings, or subgraphs when unique), the program that ran, the
    automorphisms it multiplied by (1 for unique counts) and the measured selectivity that chose it."""

    total: int
    program: DfsProgram
    order: tuple[int, ...]
    automorphisms: int
    selectivity: float


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


def arc_selectivity(xp: Any, idx: DataIndex, cands: Sequence[Any], query: Graph) -> float:
    """The geometric mean over the query's arcs ``(u, w, e)`` of the share of entries of ``N(v, e)``, ``v`` a
    strided sample of ``u``'s candidates (sorted arrays of ``xp``), that are candidates of ``w``."""
    logs = []
    for u, row in enumerate(query_adjacency(query)):
        cu = cands[u]
        step = max(1, int(cu.shape[0]) // SAMPLE_VERTICES)
        sample = cu[::step][:SAMPLE_VERTICES].astype(xp.int64)
        for w, e in row:
            entries = _run_entries(xp, idx, sample, e)
            if not entries.shape[0]:
                return 0.0
            cw = cands[w]
            pos = xp.minimum(xp.searchsorted(cw, entries), max(int(cw.shape[0]) - 1, 0))
            hit = int(xp.count_nonzero(cw[pos] == entries)) if cw.shape[0] else 0
            logs.append(math.log(max(hit, 1) / int(entries.shape[0])))
    return math.exp(sum(logs) / len(logs)) if logs else 0.0


def label_share(idx: DataIndex, query: Graph) -> float:
    """The geometric mean over the query's arcs ``(u, w)`` of the share of data vertices with ``w``'s label: what
    :func:`arc_selectivity` would measure if neighbours had the labels of random vertices (no device work)."""
    n = max(idx.n, 1)
    labels = query.vertex_labels.tolist()
    shares = [int(idx.vertices_by_label[labels[w]].shape[0]) / n if labels[w] in idx.vertices_by_label else 0.0
              for row in query_adjacency(query) for w, _ in row]
    if not shares or min(shares) == 0.0:
        return 0.0
    return math.exp(sum(map(math.log, shares)) / len(shares))


def _run_entries(xp: Any, idx: DataIndex, v: Any, e: int) -> Any:
    """The entries of the runs ``N(v, e)`` of the vertices ``v``, end to end."""
    if idx.num_labels == 1:
        lo, hi = idx.indptr[v], idx.indptr[v + 1]
    else:
        key = v * idx.num_labels + e
        pos = xp.minimum(xp.searchsorted(idx.run_keys, key), idx.run_keys.shape[0] - 1)
        found = idx.run_keys[pos] == key
        lo, hi = xp.where(found, idx.run_start[pos], 0), xp.where(found, idx.run_end[pos], 0)
    lengths = (hi - lo).astype(xp.int64)
    total = int(lengths.sum())
    first = xp.cumsum(lengths) - lengths
    at = xp.arange(total, dtype=xp.int64) - xp.repeat(first - lo.astype(xp.int64), lengths)
    return idx.nbr[at]


def count(backend: Backend, idx: DataIndex, query: Graph, breaking: Breaking, unique: bool, budget: int,
          selectivity: float, control: Control | None = None) -> DfsCount:
    """Count ``query`` in the data graph of ``idx`` (held by ``backend``) by the search, its buffers and the
    ranked graph within ``budget`` bytes; ``control`` may cancel between ranges of tasks."""
    graph = ranked_graph(backend.xp, idx)
    assert graph is not None  # unsupported() checked the label count
    # Where the data graph has one vertex label (the query's: it has candidates), no level tests labels.
    order, prog, automorphisms = planned(query, breaking, len(idx.vertices_by_label) == 1)
    found = backend.dfs_count(graph, prog, max(budget - graph.nbytes, budget // 4), control)
    return DfsCount(found if unique else found * automorphisms, prog, order, 1 if unique else automorphisms,
                    selectivity)


def planned(query: Graph, breaking: Breaking, any_label: bool) -> tuple[tuple[int, ...], DfsProgram, int]:
    """``query``'s search order, program and ``|Aut(Q)|``, kept for the last :data:`PROGRAMS_KEPT` queries by their
    structure (the stabiliser chain costs 6-17 ms for a 3- to 5-clique on the CPU: more than a triangle count)."""
    key = (query.n, query.directed, any_label, breaking, query.edge_src.tobytes(), query.edge_dst.tobytes(),
           query.edge_labels.tobytes(), query.vertex_labels.tobytes())
    found = _PROGRAMS.get(key)
    if found is None:
        order = search_order(query)
        q = renumbered(query, order)
        less_than, automorphisms = breaking(q)
        found = (tuple(order), program(q, less_than, any_label=any_label), automorphisms)
        with _PROGRAMS_LOCK:
            _PROGRAMS[key] = found
            while len(_PROGRAMS) > PROGRAMS_KEPT:
                _PROGRAMS.popitem(last=False)
    return found

