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

``timeout=S`` (seconds) bounds any call: the join stops between chunks, its device memory is freed and
``TimeoutError`` is raised.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.explain import Explanation
from distsm.plan.automorphism import stabilizer_chain
from distsm.plan.execute import QueryResult, deadline, timeout_error
from distsm.semantics import Semantics

GraphLike = Graph | str | os.PathLike | Any


def as_graph(obj: GraphLike, *, role: str = "graph") -> Graph:
    """Accept a :class:`Graph`, a path to a graph file, or a networkx graph."""
    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        from distsm.formats import read_graph

        return read_graph(obj)
    if hasattr(obj, "is_directed") and hasattr(obj, "nodes"):
        return Graph.from_networkx(obj)
    raise TypeError(f"{role} must be a distsm.Graph, a path or a networkx graph, not {type(obj).__name__}")


def _setup(data: GraphLike, query: GraphLike, semantics: Semantics, memory_budget: int | None,
           backend: str) -> tuple[Any, Graph, Graph, int, tuple[tuple[int, int], ...]]:
    be = get_backend(backend)
    d = as_graph(data, role="data")
    q = as_graph(query, role="query")
    engine.check_pair(d, q)
    if memory_budget is not None and memory_budget <= 0:
        raise ValueError(f"memory_budget must be a positive number of bytes, got {memory_budget}")
    budget = memory_budget if memory_budget is not None else be.default_budget()
    less_than = stabilizer_chain(q).symmetry_breaking() if semantics.unique else ()
    return be, d, q, int(budget), less_than


def _automorphisms(query: Graph, semantics: Semantics) -> int | None:
    """``|Aut(Q)|`` where unique counting may divide by it instead of breaking symmetry."""
    return stabilizer_chain(query).order if semantics.unique else None


def partitioned_matcher(data: Graph, partitions: int | str, *, method: str = "metis", seed: int = 0,
                        backend: str = "auto", adjacency: str = "device", budget: int | None = None) -> Any:
    """The (cached) :class:`~distsm.partitioned.PartitionedMatcher` of ``data`` split into ``partitions`` parts;
    ``partitions="auto"`` chooses ``k`` from the device ``budget`` (out of core, so ``adjacency`` must be
    ``"host"`` or ``"gather"``; see :meth:`~distsm.partitioned.PartitionedMatcher.for_budget`)."""
    from distsm.partitioned import ADJACENCY_MODES, PartitionedMatcher

    if adjacency not in ADJACENCY_MODES:
        raise ValueError(f"adjacency must be one of {', '.join(map(repr, ADJACENCY_MODES))}, got {adjacency!r}")
    auto = isinstance(partitions, str) and partitions == "auto"
    if not auto and (isinstance(partitions, bool) or not isinstance(partitions, (int, np.integer)) or partitions < 1):
        raise ValueError(f"partitions must be a positive integer or 'auto', got {partitions!r}")
    if auto and adjacency == "device":
        raise ValueError("partitions='auto' sizes parts for out-of-core search: pass adjacency='host' or 'gather'")
    be = get_backend(backend)
    key = f"partitioned:{'auto:%d' % budget if auto else int(partitions)}:{method}:{seed}:{be.name}:{adjacency}"
    matcher = data._derived.get(key)
    if matcher is None:
        if auto:
            matcher = PartitionedMatcher.for_budget(data, int(budget), method=method, seed=seed, backend=be,
                                                    adjacency=adjacency)
        else:
            matcher = PartitionedMatcher(data, int(partitions), method=method, seed=seed, backend=be,
                                         adjacency=adjacency)
        data._derived[key] = matcher
    return matcher


def count(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
          unique: bool = False, memory_budget: int | None = None, backend: str = "auto",
          partitions: int | str | None = None, partition_method: str = "metis", partition_seed: int = 0,
          adjacency: str = "device", timeout: float | None = None) -> int:
    """Count the matches of ``query`` in ``data`` (a Python int; exact, any size).

    Args:
        data, query: :class:`Graph`, path, or networkx graph.  The query must be connected.
        induced, homomorphism, unique: semantics (module docstring).
        memory_budget: bytes the join may hold at once (default: the backend's); smaller budgets run in more
            chunks and give the same answer.
        backend: ``"auto"``, ``"numpy"`` or ``"cupy"``.
        partitions: split ``data`` into this many parts (``partition_method``: ``"metis"``, ``"random"`` or
            ``"contiguous"``) and search intra-partition plus spanning matches; the answer is the same.
            ``"auto"`` chooses the number from ``memory_budget`` for a graph larger than the device (out of core).
        adjacency: with ``partitions``, where spanning searches read the whole graph's adjacency: ``"device"``
            (resident), or out of core ``"host"`` (read in place from page-locked host memory) or ``"gather"``
            (copied per table chunk, as PBE does); parts are then loaded onto the device one at a time.
        timeout: seconds the search may take; past it the work stops within one chunk, its device memory is freed
            and ``TimeoutError`` is raised.
    """
    sem = Semantics(induced, homomorphism, unique)
    control = deadline(timeout)
    be, d, q, budget, less_than = _setup(data, query, sem, memory_budget, backend)
    with timeout_error(timeout, be):
        if partitions is not None:
            matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed,
                                          backend=backend, adjacency=adjacency, budget=budget)
            return matcher.count(q, sem, budget, control=control).count
        return engine.count(be, d, q, sem.match_options, budget=budget, less_than=less_than, control=control,
                            automorphisms=_automorphisms(q, sem))


def explain(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
            unique: bool = False, memory_budget: int | None = None, backend: str = "auto") -> Explanation:
    """Count ``query`` in ``data`` in this process and say how: the path the planner chose and why, the join
    order, estimated and actual partial matches per level, and the seconds per stage.  ``str()`` of the
    result is a readable report; ``.count`` is the answer (the same as :func:`count`)."""
    sem = Semantics(induced, homomorphism, unique)
    be, d, q, budget, less_than = _setup(data, query, sem, memory_budget, backend)
    report = Explanation()
    engine.count(be, d, q, sem.match_options, budget=budget, less_than=less_than,
                 automorphisms=_automorphisms(q, sem), explain=report)
    return report


def iter_matches(data: GraphLike, query: GraphLike, *, limit: int | None = None, induced: bool = False,
                 homomorphism: bool = False, unique: bool = False, memory_budget: int | None = None,
                 backend: str = "auto", partitions: int | str | None = None, partition_method: str = "metis",
                 partition_seed: int = 0, adjacency: str = "device", timeout: float | None = None
                 ) -> Iterator[np.ndarray]:
    """Stream matches as ``int64[rows, query.n]`` chunks (column ``i`` = data vertex of query vertex ``i``).

    Memory stays within ``memory_budget`` however many matches there are; ``limit`` stops after that many rows.
    ``partitions`` and ``adjacency`` as in :func:`count` (the rows are the same set, in another order).
    ``timeout`` (seconds from this call) as in :func:`count`: the iterator raises ``TimeoutError`` past it.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    sem = Semantics(induced, homomorphism, unique)
    control = deadline(timeout)
    be, d, q, budget, less_than = _setup(data, query, sem, memory_budget, backend)
    if partitions is not None:
        matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed, backend=backend,
                                      adjacency=adjacency, budget=budget)
        chunks = matcher.iter_matches(q, sem, budget, limit, control=control)
    else:
        chunks = engine.iter_matches(be, d, q, sem.match_options, budget=budget, limit=limit, less_than=less_than,
                                     control=control)
    return chunks if control is None else _timed(chunks, timeout, be)


def _timed(chunks: Iterator[np.ndarray], timeout: float | None, backend: Any) -> Iterator[np.ndarray]:
    with timeout_error(timeout, backend):
        yield from chunks


def match(data: GraphLike, query: GraphLike, *, limit: int | None = None, induced: bool = False,
          homomorphism: bool = False, unique: bool = False, memory_budget: int | None = None,
          backend: str = "auto", partitions: int | str | None = None, partition_method: str = "metis",
          partition_seed: int = 0, adjacency: str = "device", timeout: float | None = None) -> np.ndarray:
    """All matches (or the first ``limit``) as one ``int64[rows, query.n]`` array; see :func:`iter_matches`."""
    chunks = list(iter_matches(data, query, limit=limit, induced=induced, homomorphism=homomorphism,
                               unique=unique, memory_budget=memory_budget, backend=backend, partitions=partitions,
                               partition_method=partition_method, partition_seed=partition_seed,
                               adjacency=adjacency, timeout=timeout))
    if not chunks:
        q = as_graph(query, role="query")
        return np.zeros((0, q.n), dtype=np.int64)
    return np.concatenate(chunks)


def count_batch(data: GraphLike, queries: list[GraphLike], *, partitions: int | str, names: list[str] | None = None,
                induced: bool = False, homomorphism: bool = False, unique: bool = False,
                memory_budget: int | None = None, backend: str = "auto", partition_method: str = "metis",
                partition_seed: int = 0, adjacency: str = "device", timeout: float | None = None) -> list[QueryResult]:
    """Count several queries on ``data`` split into ``partitions`` parts, as one part-major batch: each part is
    made resident once for every query's intra-partition join (out of core, each part is loaded once per batch,
    not once per query), then each query's spanning searches run.

    Returns one :class:`~distsm.plan.execute.QueryResult` per query, in order (``names`` name them; default
    ``query0``, ...), with the count, the semantics, the plan and the intra/inter split; a :class:`distsm.Matcher`
    batch on a cluster returns the same results.  Other arguments as in :func:`count`; ``timeout`` bounds the whole
    batch.
    """
    if not queries:
        return []
    sem = Semantics(induced, homomorphism, unique)
    control = deadline(timeout)
    be, d, _, budget, _ = _setup(data, queries[0], sem, memory_budget, backend)
    graphs = [as_graph(q, role="query") for q in queries]
    with timeout_error(timeout, be):
        matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed, backend=backend,
                                      adjacency=adjacency, budget=budget)
        return matcher.count_batch(graphs, sem, budget, names=names, control=control)
