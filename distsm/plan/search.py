"""One piece of a partitioned search: the intra-partition join of one part, or one spanning search.

* :func:`intra_task` — the engine on one part's induced subgraph.  Every match wholly inside the part is found
  there, and only those (local ids are sorted like global ids, so symmetry-breaking comparisons carry over).
* :func:`inter_count` / :func:`inter_rows` — one spanning search (a :class:`Span`) over the whole graph's
  adjacency (in memory or memory-mapped): the representative sequence of an edge group (PBE), or one global join
  (restricted to spanning matches, or keeping every match); its level-0 vertices may be a slice of the cross-edge
  endpoints so that the work spreads over workers.

Intra plus inter is the unpartitioned answer for every partition count, query and option.  Which pieces a query
runs, and how their results combine, is :mod:`distsm.plan.execute`'s business.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import counting, engine
from distsm.kernels.vertex_sets import restricted
from distsm.kernels.records import Spanning
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.candidate_edges import arc_edge_counts
from distsm.kernels.counting import Symmetry
from distsm.kernels.index import DataIndex
from distsm.kernels.order import query_adjacency
from distsm.kernels.query_plan import Constraints
from distsm.plan.automorphism import stabilizer_chain
from distsm.plan.inter import EdgeGroup, InterPartitionPlan, Strategy, inter_partition_plan
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork


def _less_than(query: Graph, sem: Semantics) -> tuple[tuple[int, int], ...]:
    return stabilizer_chain(query).symmetry_breaking() if sem.unique else ()


def breaking(query: Graph) -> tuple[tuple[tuple[int, int], ...], int]:
    """``query``'s symmetry-breaking pairs (its stabiliser chain's, in its own numbering) and ``|Aut(Q)|``."""
    chain = stabilizer_chain(query)
    return chain.symmetry_breaking(), chain.order


def symmetry(query: Graph, sem: Semantics, divide: bool = True) -> Symmetry:
    """How a count of ``query`` under ``sem`` breaks symmetry: for unique counts the symmetry-breaking constraints
    and, with ``divide``, ``|Aut(Q)|`` so that the count may divide instead (a slice of a count may not: its
    embeddings do not come in whole automorphism orbits).  Whole counts (``divide``) may take the depth-first
    search, which breaks the symmetry of the query in its own order (:func:`breaking`)."""
    if not sem.unique:
        return Symmetry(breaking=breaking if divide else None)
    chain = stabilizer_chain(query)
    return Symmetry(chain.symmetry_breaking(), chain.order if divide else None, breaking if divide else None,
                    unique=True)


def cross_fraction(cross_edges: int, total_edges: int) -> float:
    """The share of the data graph's edges that cross parts (0 for a graph without edges)."""
    return cross_edges / total_edges if total_edges else 0.0


def plan_inter(backend: Backend, index: DataIndex, query: Graph, sem: Semantics, crossing: float,
               share: bool = True, strategy: Strategy | str | None = None, *,
               candidates: list[Any] | None = None) -> InterPartitionPlan:
    """The inter-partition plan of ``query`` with the data graph's statistics (cost model inputs: ``crossing`` is
    its :func:`cross_fraction`); ``strategy`` overrides the cost model's choice (the plan's reason says so) and
    ``share=False`` turns shared execution off.  ``candidates`` reuses the query's candidate filter on ``index``."""
    forced = None if strategy is None else Strategy.parse(strategy)
    cands = candidates if candidates is not None else backend.candidates(index, query, homomorphism=sem.homomorphism)
    sizes = [int(c.shape[0]) for c in cands]
    plan = inter_partition_plan(query, candidate_sizes=sizes, label_entries=index.label_entries, n_data=index.n,
                                cross_fraction=crossing, homomorphism=sem.homomorphism, unique=sem.unique,
                                share=share)
    if forced is not None and forced is not plan.strategy:
        plan = replace(plan, strategy=forced, reason=f"forced by the caller (the cost model chose {plan.strategy})")
    return plan


def start_candidates(backend: Backend, index: DataIndex, query: Graph, sem: Semantics,
                     candidates: list[Any]) -> tuple[Any, Any]:
    """``(ids, weights)``: the candidates (of ``candidates``, the filter on ``backend``'s ``index``) of the query
    vertex a global join of ``query`` starts from, which slices of that join range over, and an estimate of each
    one's work: one plus its candidate edges towards the vertex the join visits second (the rows it starts)."""
    order = engine.start_order(index, query, sem.match_options, candidates, Constraints(_less_than(query, sem)))
    ids = candidates[order[0]]
    if len(order) < 2:
        return ids, backend.xp.ones(ids.shape[0], dtype=np.int64)
    label = next(e for w, e in query_adjacency(query)[order[0]] if w == order[1])
    return ids, arc_edge_counts(backend, index, candidates, (order[0], order[1], label)) + 1


def intra_task(backend: Backend, local: Any, work: QueryWork, *, count_only: bool, limit: int | None = None) -> Any:
    """Matches of ``work`` wholly inside one part: an int, or an iterator of global-id rows (its control cancels the
    join between chunks: see :class:`~distsm.kernels.engine.Control`)."""
    query, sem = work.query, work.sem
    less = _less_than(query, sem)
    if count_only:
        return counting.count(backend, local.graph, counting.Target(query, sem.match_options, Symmetry(less)),
                              budget=work.budget, control=work.control)
    rows = engine.iter_matches(backend, local.graph, query, sem.match_options, budget=work.budget, limit=limit,
                               constraints=Constraints(less), control=work.control)
    return (np.asarray(local.global_ids)[r] for r in rows)


@dataclass(frozen=True)
class SpanningSearch:
    """One spanning search filtered and planned once, to be restricted to many slices of its start vertices.

    ``anchor`` is the query vertex whose images a slice restricts (the prime edge's first endpoint, or the first
    vertex of the global join's order); ``prepared`` is the unrestricted join (None: some query vertex has no
    candidate, so no slice has a match).  Restricting a slice only narrows candidate arrays, so the order planned
    for the whole search serves every slice and the answer of a slice does not depend on it.
    """

    anchor: int
    prepared: engine.PreparedQuery | None


def prepare_search(backend: Backend, index: DataIndex, query: Graph, sem: Semantics, *, group: EdgeGroup | None,
                   spanning_only: bool = True, candidates: list[Any] | None = None) -> SpanningSearch:
    """Filter and plan one spanning search (see :class:`Span` for ``group`` and ``spanning_only``);
    ``candidates`` reuses the query's candidate filter on ``index``."""
    less = _less_than(query, sem)
    if candidates is None:
        candidates = backend.candidates(index, query, homomorphism=sem.homomorphism)
    prime = None if group is None else group.representative.prime_edge
    shape = Constraints(less, prime_edge=prime, spanning_only=group is None and spanning_only)
    prepared = engine.prepare(backend, index, query, sem.match_options, constraints=shape, candidates=candidates)
    if group is not None:
        anchor = group.representative.edge[0]
    else:
        # Slice the vertex the join starts from: restricting any other vertex would leave every slice the whole
        # join up to that vertex's level, and the slices would repeat each other's work.
        anchor = 0 if prepared is None else prepared.plan.order[0]
    return SpanningSearch(anchor, prepared)


def restrict_search(backend: Backend, search: SpanningSearch, restrict: dict[int, Any]) -> engine.PreparedQuery | None:
    """``search``'s prepared join with the candidates of each query vertex ``u`` in ``restrict`` narrowed to
    ``restrict[u]`` (an array or a range of data ids); None when a vertex is left without candidates."""
    prepared = search.prepared
    if prepared is None or not restrict:
        return prepared
    cands, bits = list(prepared.candidates), list(prepared.bits)
    for u, allowed in restrict.items():
        cands[u] = restricted(backend.xp, cands[u], allowed)
        if cands[u].shape[0] == 0:
            return None
        if bits[u] is not None:
            bits[u] = backend.bitset(prepared.index, cands[u])
    return replace(prepared, candidates=cands, bitsets=bits)


@dataclass(frozen=True)
class WholeGraph:
    """What spanning searches read: the whole graph's ``index``, the part of every vertex (``assignment``) and,
    out of core, a :class:`~distsm.kernels.gather.HostAdjacency` whose core is ``index`` that gathers the
    adjacency from host memory level by level (None: read the index)."""

    index: DataIndex
    assignment: Any
    adjacency: Any = None


@dataclass(frozen=True)
class Span:
    """One spanning search: an edge group's representative (``group``) or, with ``group=None``, the global join,
    restricted to spanning matches unless ``spanning_only`` is False (then it keeps every match: the whole answer
    in one join, for plans that skip the intra-partition searches).

    ``start`` (None: no limit) restricts the images of one query vertex (the prime edge's first endpoint, or the
    first vertex of the global join's order); disjoint slices split the search into disjoint pieces, which is how
    the work spreads over workers.  ``second`` (a range of data ids) further restricts the vertex the join visits
    second, which splits the work of one heavy start vertex.
    """

    group: EdgeGroup | None = None
    start: Any = None
    second: range | None = None
    spanning_only: bool = True


def _spanning_join(backend: Backend, graph: WholeGraph, query: Graph, sem: Semantics, span: Span,
                   search: SpanningSearch | None) -> tuple[engine.PreparedQuery, Spanning | None] | None:
    """``span``'s prepared join (``search``: planned once for every slice; None plans it here) restricted to its
    slice, and its partition test; None when the slice has no candidate."""
    if search is None:
        search = prepare_search(backend, graph.index, query, sem, group=span.group, spanning_only=span.spanning_only)
    restrict: dict[int, Any] = {}
    if span.start is not None:
        restrict[search.anchor] = span.start
    if span.second is not None and search.prepared is not None:
        restrict[search.prepared.plan.order[1]] = span.second
    prepared = restrict_search(backend, search, restrict)
    if prepared is None:
        return None
    part = backend.xp.asarray(graph.assignment)
    return prepared, Spanning(part, prepared.plan.prime) if prepared.plan.needs_partition else None


def inter_count(backend: Backend, graph: WholeGraph, work: QueryWork, span: Span, *,
                stats: dict[str, int] | None = None, search: SpanningSearch | None = None) -> int:
    """The number of matches of ``work`` that ``span`` stands for (the representative's count times the group size
    when results are shared).  ``stats`` accumulates the join's work; the work's control cancels it between
    chunks; ``search`` (from :func:`prepare_search` with the same arguments) saves planning again for every slice."""
    joined = _spanning_join(backend, graph, work.query, work.sem, span, search)
    if joined is None:
        return 0
    prepared, spanning = joined
    found = sum(int(c) for c in engine.walk(backend, prepared, work.budget, True, spanning, graph.adjacency,
                                            engine.Watch(stats, work.control)))
    return found * (len(span.group.sequences) if span.group is not None else 1)


def inter_rows(backend: Backend, graph: WholeGraph, work: QueryWork, span: Span, *, limit: int | None = None,
               search: SpanningSearch | None = None) -> Iterator[np.ndarray]:
    """The global-id rows of ``work`` in ``span`` (at most ``limit``), REMAPped to every member of its group."""
    joined = _spanning_join(backend, graph, work.query, work.sem, span, search)
    if joined is None:
        return iter(())
    prepared, spanning = joined
    return _remapped_rows(backend, prepared, work.budget, spanning, span.group, limit, graph.adjacency, work.control)


def _remapped_rows(backend: Backend, prepared: Any, budget: int | BudgetPlan, spanning: Any,
                   group: EdgeGroup | None,
                   limit: int | None, adjacency: Any, control: engine.Control | None) -> Iterator[np.ndarray]:
    inv = prepared.plan.inverse_order
    # f has the representative's prime edge; f∘t⁻¹ has member t's: row[u] = f[t⁻¹(u)].
    remaps = [np.argsort(np.asarray(seq.remap)) for seq in group.sequences] if group is not None else []

    def chunks() -> Iterator[np.ndarray]:
        for table in engine.walk(backend, prepared, budget, False, spanning, adjacency,
                                 engine.Watch(control=control)):
            rows = backend.to_host(table)[:, inv].astype(np.int64)
            if len(remaps) > 1:
                yield from (rows[:, t_inv] for t_inv in remaps)
            else:
                yield rows

    return engine.take(chunks(), limit)
