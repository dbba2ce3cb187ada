"""The single-process public API: ``count``, ``match`` and ``iter_matches``.

Semantics (DESIGN §1): a match is an injective map ``f`` from query vertices to data vertices that keeps vertex
labels and maps every query edge to a data edge with the same label (and direction).  Extra data edges among the
images are allowed and automorphic maps count separately.  Options change this:

* ``induced=True``: query non-edges must map to data non-edges (and, for directed graphs, the arcs between two
  images must be exactly the query's arcs).
* ``homomorphism=True``: drop injectivity.
* ``unique=True``: count each matched subgraph once (embeddings / |Aut(Q)|); listing returns one embedding per
  subgraph.  Not defined together with ``homomorphism``.
* ``limit=N`` (listing): stop after ``N`` rows.
* ``restrict={query node: allowed data nodes}``: only matches mapping each named query node into its allowed set
  (igraph LAD's ``domains``); not combinable with ``unique`` (one embedding per subgraph need not satisfy it).

Names: query and data graphs may name their nodes and label them with any hashable values
(:meth:`Graph.from_networkx`, SNAP ids).  Labels are matched by value, whatever the two graphs' encodings
(:func:`distsm.labels.reconcile`).  ``restrict`` takes the graphs' names; :func:`iter_mappings` and
``match(..., as_frame=True)`` give results in them, while the arrays of :func:`match` and :func:`iter_matches`
hold vertex positions (``0..n-1``; ``graph.node_ids[rows]`` maps them to names).

``timeout=S`` (seconds) bounds any call: the join stops between chunks, its device memory is freed and
``TimeoutError`` is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

import numpy as np

from distsm import caches
from distsm.arguments import entry_point
from distsm.graph import Graph
from distsm.kernels import counting, engine, get_backend
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.explain import Explanation
from distsm.kernels.query_plan import Constraints
from distsm.plan.execute import timeout_error
from distsm.plan.results import QueryResult
from distsm.request import (GraphLike, Partitioning, Request, Restrict, as_graph, prepare, query_for,
                            restrict_positions)
from distsm.resources import Resources
from distsm.semantics import Semantics
from distsm.vocabulary import Adjacency, BackendName, PartitionMethod

__all__ = ["GraphLike", "Restrict", "as_graph", "count", "count_batch", "explain", "iter_batch", "iter_mappings",
           "iter_matches", "match", "partitioned_matcher", "restrict_positions"]

T = TypeVar("T")

_MATCHERS = caches.cache("partitioned matchers", "data Graph, partitioning -> its PartitionedMatcher")


def partitioned_matcher(request: Request) -> Any:
    """The (cached) :class:`~distsm.partitioned.PartitionedMatcher` of the request's data graph and partitioning;
    ``parts="auto"`` chooses ``k`` from the request's budget (:func:`~distsm.residency.partitions_for_budget`)."""
    from distsm.partitioned import PartitionedMatcher

    how, data, be = request.partitioning, request.data, request.backend
    assert how is not None  # only partitioned requests get here
    auto = how.parts == "auto"
    key = f"partitioned:{f'auto:{request.budget}' if auto else int(how.parts)}:{how.method}:" \
          f"{how.seed}:{be.name}:{how.adjacency}"
    matcher: PartitionedMatcher | None = _MATCHERS.get(data, key)
    if matcher is None:
        made = PartitionedMatcher(data, how, backend=be, budget=request.budget if auto else None)
        matcher = _MATCHERS.put(data, made, key)
    return matcher


def _partitioning(partitions: int | str | None, method: PartitionMethod, seed: int,
                  adjacency: Adjacency) -> Partitioning | None:
    """The :class:`Partitioning` the keywords name (None without ``partitions``; the entry points' decorator has
    checked every keyword, also those that ``partitions=None`` leaves unused)."""
    return None if partitions is None else Partitioning(partitions, method, seed, adjacency)


@entry_point
def count(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
          unique: bool = False, memory_budget: int | str | None = None, backend: BackendName = "auto",
          partitions: int | str | None = None, partition_method: PartitionMethod = "metis", partition_seed: int = 0,
          adjacency: Adjacency = "device", restrict: Restrict | None = None,
          progress: Callable[[int, int], None] | None = None, timeout: float | None = None) -> int:
    """Count the matches of ``query`` in ``data`` (a Python int; exact, any size).

    Args:
        data, query: :class:`Graph`, path, or networkx graph.  The query must be connected.
        induced, homomorphism, unique: semantics (module docstring).
        memory_budget: bytes the join may hold at once, or a size such as ``"512MiB"`` or ``"1GB"`` as the CLI
            takes it (default: the backend's); smaller budgets run in more
            chunks and give the same answer.
        backend: ``"auto"``, ``"numpy"`` or ``"cupy"``.
        partitions: split ``data`` into this many parts (``partition_method``: ``"metis"``, ``"random"`` or
            ``"contiguous"``) and search intra-partition plus spanning matches; the answer is the same.
            ``"auto"`` chooses the number from ``memory_budget`` for a graph larger than the device (out of core).
        adjacency: with ``partitions``, where spanning searches read the whole graph's adjacency: ``"device"``
            (resident), or out of core ``"host"`` (read in place from page-locked host memory) or ``"gather"``
            (copied per table chunk, as PBE does); parts are then loaded onto the device one at a time.
        restrict: ``{query node: allowed data nodes}`` in the graphs' node names (module docstring); not with
            ``partitions``.
        progress: called as ``progress(done, total)`` while the join runs, in rows of its first level (the
            engine cuts that level into at least 32 chunks); without ``partitions`` only.
        timeout: seconds the search may take; past it the work stops within one chunk, its device memory is freed
            and ``TimeoutError`` is raised.
    """
    how = _partitioning(partitions, partition_method, partition_seed, adjacency)
    req = prepare(data, query, Semantics.of(induced, homomorphism, unique),
                  Resources.of(memory_budget, backend, timeout), restrict=restrict, partitioning=how, progress=progress)
    with timeout_error(timeout, req.backend):
        if req.partitioning is not None:
            return partitioned_matcher(req).count(req.query, req.semantics, req.budget, control=req.control).count
        return counting.count(req.backend, req.data,
                              counting.Target(req.query, req.semantics.match_options, req.symmetry(), req.restrict),
                              budget=req.budget, control=req.control)


@entry_point
def explain(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
            unique: bool = False, memory_budget: int | str | None = None, backend: BackendName = "auto") -> Explanation:
    """Count ``query`` in ``data`` in this process and say how: the path the planner chose and why, the join
    order, estimated and actual partial matches per level, and the seconds per stage.  ``str()`` of the
    result is a readable report; ``.count`` is the answer (the same as :func:`count`)."""
    req = prepare(data, query, Semantics.of(induced, homomorphism, unique), Resources.of(memory_budget, backend))
    report = Explanation()
    counting.count(req.backend, req.data, counting.Target(req.query, req.semantics.match_options, req.symmetry()),
                   budget=req.budget, explain=report)
    return report


@entry_point
def iter_matches(data: GraphLike, query: GraphLike, *, limit: int | None = None, induced: bool = False,
                 homomorphism: bool = False, unique: bool = False, memory_budget: int | str | None = None,
                 backend: BackendName = "auto", partitions: int | str | None = None,
                 partition_method: PartitionMethod = "metis", partition_seed: int = 0,
                 adjacency: Adjacency = "device", restrict: Restrict | None = None,
                 timeout: float | None = None) -> Iterator[np.ndarray]:
    """Stream matches as ``int64[rows, query.n]`` chunks (column ``i`` = data vertex position of query vertex
    ``i``; :func:`iter_mappings` gives node names instead).

    Memory stays within ``memory_budget`` however many matches there are; ``limit`` stops after that many rows
    (and, without a ``memory_budget`` or ``partitions``, sizes the join's chunks for that many rows: see
    :meth:`~distsm.kernels.budget.BudgetPlan.listing`).
    ``partitions``, ``adjacency`` and ``restrict`` as in :func:`count` (with ``partitions`` the rows are the same
    set, in another order).  ``timeout`` (seconds from this call) as in :func:`count`: the iterator raises
    ``TimeoutError`` past it.
    """
    how = _partitioning(partitions, partition_method, partition_seed, adjacency)
    req = prepare(data, query, Semantics.of(induced, homomorphism, unique),
                  Resources.of(memory_budget, backend, timeout), restrict=restrict, partitioning=how)
    q, budget = req.query, req.budget
    if req.partitioning is not None:
        chunks = partitioned_matcher(req).iter_matches(q, req.semantics, budget, limit, control=req.control)
    else:
        if memory_budget is None and limit is not None:
            budget = BudgetPlan.of(budget).listing(limit, q.n)
        chunks = engine.iter_matches(req.backend, req.data, q, req.semantics.match_options, budget=budget,
                                     limit=limit, constraints=Constraints(req.less_than, req.restrict),
                                     control=req.control)
    return chunks if req.control is None else _timed(chunks, timeout, req.backend)


def _timed(items: Iterator[T], timeout: float | None, backend: Backend) -> Iterator[T]:
    with timeout_error(timeout, backend):
        yield from items


@entry_point
def match(data: GraphLike, query: GraphLike, *, limit: int | None = None, induced: bool = False,
          homomorphism: bool = False, unique: bool = False, memory_budget: int | str | None = None,
          backend: BackendName = "auto", partitions: int | str | None = None,
          partition_method: PartitionMethod = "metis", partition_seed: int = 0,
          adjacency: Adjacency = "device", restrict: Restrict | None = None,
          as_frame: bool = False, timeout: float | None = None) -> Any:
    """All matches (or the first ``limit``) as one ``int64[rows, query.n]`` array of data vertex positions; see
    :func:`iter_matches`.

    With ``as_frame=True`` the result is a DataFrame instead: one column per query node, named by the query's
    node names, holding the data graph's node names (networkx nodes, SNAP ids; positions for graphs without
    names).  It is a cuDF DataFrame when the CuPy backend ran and cuDF is installed, else pandas.
    """
    d = as_graph(data, role="data")
    q = query_for(d, query)
    chunks = list(iter_matches(d, q, limit=limit, induced=induced, homomorphism=homomorphism, unique=unique,
                               memory_budget=memory_budget, backend=backend, partitions=partitions,
                               partition_method=partition_method, partition_seed=partition_seed,
                               adjacency=adjacency, restrict=restrict, timeout=timeout))
    rows = np.concatenate(chunks) if chunks else np.zeros((0, q.n), dtype=np.int64)
    if not as_frame:
        return rows
    return _frame(d, q, rows, get_backend(backend).on_device)


def _frame(data: Graph, query: Graph, rows: np.ndarray, on_gpu: bool) -> Any:
    import pandas as pd

    values = rows if data.node_ids is None else data.node_ids[rows]
    frame = pd.DataFrame(values, columns=query.names())
    if on_gpu:
        try:
            import cudf
        except ImportError:
            return frame
        return cudf.DataFrame.from_pandas(frame)
    return frame


@entry_point
def count_batch(data: GraphLike, queries: list[GraphLike], *, partitions: int | str, names: list[str] | None = None,
                induced: bool = False, homomorphism: bool = False, unique: bool = False,
                memory_budget: int | str | None = None, backend: BackendName = "auto",
                partition_method: PartitionMethod = "metis", partition_seed: int = 0,
                adjacency: Adjacency = "device", timeout: float | None = None) -> list[QueryResult]:
    """Count several queries on ``data`` split into ``partitions`` parts, as one batch.  Each query spreads as on a
    one-worker cluster (:mod:`distsm.plan.distribution`): a count goes whole, one join over the whole graph by the
    counting paths of :func:`count`; queries that run their partitioned plan run part-major: each part is made
    resident once for every such query's intra-partition join (out of core, each part is loaded once per batch,
    not once per query), then each query's spanning searches run.

    Returns one :class:`~distsm.plan.results.QueryResult` per query, in order (``names`` name them; default
    ``query0``, ...), with the count, the semantics, the plan and the intra/inter split; a :class:`distsm.Matcher`
    batch on a cluster returns the same results.  Other arguments as in :func:`count`; ``timeout`` bounds the whole
    batch.  :func:`iter_batch` yields the same results as they complete.
    """
    return list(iter_batch(data, queries, partitions=partitions, names=names, induced=induced,
                           homomorphism=homomorphism, unique=unique, memory_budget=memory_budget, backend=backend,
                           partition_method=partition_method, partition_seed=partition_seed, adjacency=adjacency,
                           timeout=timeout))


@entry_point
def iter_batch(data: GraphLike, queries: list[GraphLike], *, partitions: int | str, names: list[str] | None = None,
               induced: bool = False, homomorphism: bool = False, unique: bool = False,
               memory_budget: int | str | None = None, backend: BackendName = "auto",
               partition_method: PartitionMethod = "metis", partition_seed: int = 0,
               adjacency: Adjacency = "device", timeout: float | None = None) -> Iterator[QueryResult]:
    """:func:`count_batch`'s results, each yielded as its query completes (in query order).  Past ``timeout`` the
    running join stops within one chunk, its device memory is freed and ``TimeoutError`` is raised."""
    if not isinstance(queries, list):
        raise TypeError(f"queries must be a list of queries, not {type(queries).__name__}")
    how = _partitioning(partitions, partition_method, partition_seed, adjacency)
    if how is None:
        raise ValueError("partitions must be a positive integer or 'auto' for a batch, got None")
    if not queries:
        return iter(())
    req = prepare(data, queries, Semantics.of(induced, homomorphism, unique),
                  Resources.of(memory_budget, backend, timeout), partitioning=how)
    results = partitioned_matcher(req).iter_batch(list(req.queries), req.semantics, req.budget, names=names,
                                                  control=req.control)
    return _timed(results, timeout, req.backend)


def iter_mappings(data: GraphLike, query: GraphLike, **options: Any) -> Iterator[dict[Hashable, Hashable]]:
    """Yield every match as a dict ``{query node: data node}`` in the graphs' node names (as networkx's
    ``GraphMatcher.subgraph_monomorphisms_iter`` does, with the query's nodes as keys).

    ``options`` are those of :func:`iter_matches` (``limit``, ``induced``, ``restrict``, ...).  Matches are read
    chunk by chunk, so memory stays bounded however many there are.
    """
    d = as_graph(data, role="data")
    q = query_for(d, query)
    keys = q.names()
    for rows in iter_matches(d, q, **options):
        values = rows if d.node_ids is None else d.node_ids[rows]
        for row in values.tolist():
            yield dict(zip(keys, row))
