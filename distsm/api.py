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

import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from distsm.arguments import check_choice, check_flag, check_int
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.backend import Backend
from distsm.kernels.explain import Explanation
from distsm.labels import reconcile
from distsm.plan.automorphism import stabilizer_chain
from distsm.plan.execute import QueryResult, deadline, timeout_error
from distsm.semantics import Semantics
from distsm.vocabulary import BACKENDS, AdjacencyMode, BackendName, PartitionMethod, check_adjacency

GraphLike = Graph | str | os.PathLike | Any
Restrict = Mapping[Hashable, Iterable[Hashable]]


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
    """Check the arguments, load the graphs and put the query in the data graph's label codes."""
    check_int("memory_budget", memory_budget, minimum=1)
    be = get_backend(check_choice("backend", backend, BACKENDS))
    d = as_graph(data, role="data")
    q = _query_for(d, query)
    budget = memory_budget if memory_budget is not None else be.default_budget()
    less_than = stabilizer_chain(q).symmetry_breaking() if semantics.unique else ()
    return be, d, q, int(budget), less_than


def _query_for(data: Graph, query: GraphLike) -> Graph:
    """Load ``query``, check it against ``data`` and put it in ``data``'s label codes."""
    q = as_graph(query, role="query")
    engine.check_pair(data, q)
    return reconcile(q, data)


def _automorphisms(query: Graph, semantics: Semantics) -> int | None:
    """``|Aut(Q)|`` where unique counting may divide by it instead of breaking symmetry."""
    return stabilizer_chain(query).order if semantics.unique else None


def restrict_positions(data: Graph, query: Graph, restrict: Restrict | None,
                       semantics: Semantics) -> dict[int, np.ndarray] | None:
    """``restrict`` (query node name -> data node names) as positions (query vertex -> sorted data vertices).

    Raises:
        GraphError: a name that is no node of its graph.
        TypeError: ``restrict`` is not a mapping of iterables.
        ValueError: ``restrict`` together with ``unique``.
    """
    if restrict is None:
        return None
    if not isinstance(restrict, Mapping):
        raise TypeError(f"restrict must be a dict {{query node: allowed data nodes}}, not {type(restrict).__name__}")
    if semantics.unique:
        raise ValueError("restrict cannot be combined with unique=True: the one embedding kept per subgraph "
                         "need not be one that satisfies the restriction")
    out: dict[int, np.ndarray] = {}
    for name, allowed in restrict.items():
        if isinstance(allowed, (str, bytes)) or not isinstance(allowed, Iterable):
            raise TypeError(f"restrict[{name!r}] must be a collection of data nodes, not {type(allowed).__name__}")
        (u,) = query.positions([name], what="restrict names query node").tolist()
        out[u] = np.unique(data.positions(allowed, what=f"restrict[{name!r}] names data node"))
    return out


#: The smallest budget :func:`listing_budget` gives: chunks small enough to answer at once, big enough to keep
#: the per-chunk overhead low.
MIN_LISTING_BUDGET = 32 << 20


def listing_budget(budget: int, limit: int, columns: int) -> int:
    """The budget for listing the first ``limit`` rows of a ``columns``-vertex query: the join runs depth first
    over chunks, so chunks sized for a few times ``limit`` rows per level reach the first rows sooner than
    chunks sized by the whole default ``budget`` (never more than ``budget``)."""
    wanted = 4 * max(limit, 1) * columns * engine.entry_bytes(columns)
    return int(min(budget, max(wanted, MIN_LISTING_BUDGET)))


def _check_partitioned(restrict: Restrict | None, partitions: int | str | None) -> None:
    if restrict is not None and partitions is not None:
        raise ValueError("restrict is not supported together with partitions; drop one of them")


def partitioned_matcher(data: Graph, partitions: int | str, *, method: PartitionMethod = "metis", seed: int = 0,
                        backend: BackendName = "auto", adjacency: AdjacencyMode = "device",
                        budget: int | None = None) -> Any:
    """The (cached) :class:`~distsm.partitioned.PartitionedMatcher` of ``data`` split into ``partitions`` parts;
    ``partitions="auto"`` chooses ``k`` from the device ``budget`` (out of core, so ``adjacency`` must be
    ``"host"`` or ``"gather"``; see :meth:`~distsm.partitioned.PartitionedMatcher.for_budget`)."""
    from distsm.partitioned import PartitionedMatcher

    check_adjacency(adjacency)
    auto = isinstance(partitions, str) and partitions == "auto"
    if not auto and (isinstance(partitions, bool) or not isinstance(partitions, (int, np.integer)) or partitions < 1):
        raise ValueError(f"partitions must be a positive integer or 'auto', got {partitions!r}")
    if auto and adjacency == "device":
        raise ValueError("partitions='auto' sizes parts for out-of-core search: pass adjacency='host' or 'gather'")
    be = get_backend(backend)
    key = f"partitioned:{f'auto:{budget}' if auto else int(partitions)}:{method}:{seed}:{be.name}:{adjacency}"
    matcher = data._derived.get(key)
    if matcher is None:
        if auto:
            if budget is None:
                raise ValueError("partitions='auto' needs the device budget to size parts for")
            matcher = PartitionedMatcher.for_budget(data, int(budget), method=method, seed=seed, backend=be,
                                                    adjacency=adjacency)
        else:
            matcher = PartitionedMatcher(data, int(partitions), method=method, seed=seed, backend=be,
                                         adjacency=adjacency)
        data._derived[key] = matcher
    return matcher


def count(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
          unique: bool = False, memory_budget: int | None = None, backend: BackendName = "auto",
          partitions: int | str | None = None, partition_method: PartitionMethod = "metis", partition_seed: int = 0,
          adjacency: AdjacencyMode = "device", restrict: Restrict | None = None,
          progress: Callable[[int, int], None] | None = None, timeout: float | None = None) -> int:
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
        restrict: ``{query node: allowed data nodes}`` in the graphs' node names (module docstring); not with
            ``partitions``.
        progress: called as ``progress(done, total)`` while the join runs, in rows of its first level (the
            engine cuts that level into at least 32 chunks); without ``partitions`` only.
        timeout: seconds the search may take; past it the work stops within one chunk, its device memory is freed
            and ``TimeoutError`` is raised.
    """
    sem = Semantics(induced, homomorphism, unique)
    _check_partitioned(restrict, partitions)
    if progress is not None and partitions is not None:
        raise ValueError("progress reports a single join's work: it is not available together with partitions")
    be, d, q, budget, less_than = _setup(data, query, sem, memory_budget, backend)
    allowed = restrict_positions(d, q, restrict, sem)
    control = deadline(timeout, progress)
    with timeout_error(timeout, be):
        if partitions is not None:
            matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed,
                                          backend=backend, adjacency=adjacency, budget=budget)
            return matcher.count(q, sem, budget, control=control).count
        return engine.count(be, d, q, sem.match_options, budget=budget, less_than=less_than, restrict=allowed,
                            control=control, automorphisms=_automorphisms(q, sem))


def explain(data: GraphLike, query: GraphLike, *, induced: bool = False, homomorphism: bool = False,
            unique: bool = False, memory_budget: int | None = None, backend: BackendName = "auto") -> Explanation:
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
                 backend: BackendName = "auto", partitions: int | str | None = None,
                 partition_method: PartitionMethod = "metis", partition_seed: int = 0,
                 adjacency: AdjacencyMode = "device", restrict: Restrict | None = None,
                 timeout: float | None = None) -> Iterator[np.ndarray]:
    """Stream matches as ``int64[rows, query.n]`` chunks (column ``i`` = data vertex position of query vertex
    ``i``; :func:`iter_mappings` gives node names instead).

    Memory stays within ``memory_budget`` however many matches there are; ``limit`` stops after that many rows
    (and, without a ``memory_budget`` or ``partitions``, sizes the join's chunks for that many rows: see
    :func:`listing_budget`).
    ``partitions``, ``adjacency`` and ``restrict`` as in :func:`count` (with ``partitions`` the rows are the same
    set, in another order).  ``timeout`` (seconds from this call) as in :func:`count`: the iterator raises
    ``TimeoutError`` past it.
    """
    check_int("limit", limit, minimum=0)
    sem = Semantics(induced, homomorphism, unique)
    _check_partitioned(restrict, partitions)
    be, d, q, budget, less_than = _setup(data, query, sem, memory_budget, backend)
    allowed = restrict_positions(d, q, restrict, sem)
    control = deadline(timeout)
    if partitions is not None:
        matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed, backend=backend,
                                      adjacency=adjacency, budget=budget)
        chunks = matcher.iter_matches(q, sem, budget, limit, control=control)
    else:
        if memory_budget is None and limit is not None:
            budget = listing_budget(budget, limit, q.n)
        chunks = engine.iter_matches(be, d, q, sem.match_options, budget=budget, limit=limit, less_than=less_than,
                                     restrict=allowed, control=control)
    return chunks if control is None else _timed(chunks, timeout, be)


def _timed(chunks: Iterator[np.ndarray], timeout: float | None, backend: Backend) -> Iterator[np.ndarray]:
    with timeout_error(timeout, backend):
        yield from chunks


def match(data: GraphLike, query: GraphLike, *, limit: int | None = None, induced: bool = False,
          homomorphism: bool = False, unique: bool = False, memory_budget: int | None = None,
          backend: BackendName = "auto", partitions: int | str | None = None,
          partition_method: PartitionMethod = "metis", partition_seed: int = 0,
          adjacency: AdjacencyMode = "device", restrict: Restrict | None = None,
          as_frame: bool = False, timeout: float | None = None) -> Any:
    """All matches (or the first ``limit``) as one ``int64[rows, query.n]`` array of data vertex positions; see
    :func:`iter_matches`.

    With ``as_frame=True`` the result is a DataFrame instead: one column per query node, named by the query's
    node names, holding the data graph's node names (networkx nodes, SNAP ids; positions for graphs without
    names).  It is a cuDF DataFrame when the CuPy backend ran and cuDF is installed, else pandas.
    """
    check_flag("as_frame", as_frame)
    d = as_graph(data, role="data")
    q = as_graph(query, role="query")
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


def count_batch(data: GraphLike, queries: list[GraphLike], *, partitions: int | str, names: list[str] | None = None,
                induced: bool = False, homomorphism: bool = False, unique: bool = False,
                memory_budget: int | None = None, backend: BackendName = "auto",
                partition_method: PartitionMethod = "metis", partition_seed: int = 0,
                adjacency: AdjacencyMode = "device", timeout: float | None = None) -> list[QueryResult]:
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
    be, d, first, budget, _ = _setup(data, queries[0], sem, memory_budget, backend)
    graphs = [first, *(_query_for(d, q) for q in queries[1:])]
    with timeout_error(timeout, be):
        matcher = partitioned_matcher(d, partitions, method=partition_method, seed=partition_seed, backend=backend,
                                      adjacency=adjacency, budget=budget)
        return matcher.count_batch(graphs, sem, budget, names=names, control=control)


def iter_mappings(data: GraphLike, query: GraphLike, **options: Any) -> Iterator[dict[Hashable, Hashable]]:
    """Yield every match as a dict ``{query node: data node}`` in the graphs' node names (as networkx's
    ``GraphMatcher.subgraph_monomorphisms_iter`` does, with the query's nodes as keys).

    ``options`` are those of :func:`iter_matches` (``limit``, ``induced``, ``restrict``, ...).  Matches are read
    chunk by chunk, so memory stays bounded however many there are.
    """
    d = as_graph(data, role="data")
    q = as_graph(query, role="query")
    keys = q.names()
    for rows in iter_matches(d, q, **options):
        values = rows if d.node_ids is None else d.node_ids[rows]
        for row in values.tolist():
            yield dict(zip(keys, row))
