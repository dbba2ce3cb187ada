"""One validated request per call: what every entry point (``count``, ``match``, ``explain``, ``count_batch``,
``Matcher.submit``, the CLI) does before any work starts, done once and in one place.

:func:`prepare` loads the graphs (a :class:`~distsm.graph.Graph`, a path or a networkx graph), checks every
query against the data graph (:func:`~distsm.kernels.engine.check_pair`), puts each query in the data graph's
label codes (:func:`~distsm.labels.reconcile`: labels are matched by value, whatever the two graphs' encodings),
decides the semantics, the symmetry handling and the budget, and checks the arguments against one table of
constraints between parameters (:data:`CONFLICTS`), so that a bad choice reads the same from every entry point.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import engine
from distsm.kernels.backend import Backend
from distsm.kernels.counting import Symmetry
from distsm.labels import reconcile
from distsm.resources import DEFAULT_RESOURCES, Resources
from distsm.plan.execute import deadline
from distsm.plan.search import symmetry
from distsm.semantics import Semantics
from distsm.partition.spec import Partitioning

GraphLike = Graph | str | os.PathLike | Any
Restrict = Mapping[Hashable, Iterable[Hashable]]

#: Pairs of arguments that cannot be given together, and why (the one wording every entry point uses).
CONFLICTS: tuple[tuple[str, str, str], ...] = (
    ("restrict", "unique", "the one embedding kept per subgraph need not be one that satisfies the restriction"),
    ("restrict", "partitions", "partitioned search takes no per-vertex restriction; drop one of them"),
    ("progress", "partitions", "progress reports a single join's work"),
)


def check_conflicts(given: Mapping[str, Any]) -> None:
    """Refuse any pair of :data:`CONFLICTS` that ``given`` (argument name -> value; None or False: not given)
    holds both of."""
    for a, b, why in CONFLICTS:
        if given.get(a) not in (None, False) and given.get(b) not in (None, False):
            raise ValueError(f"{a} cannot be combined with {b}: {why}")


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


def query_for(data: Graph, query: GraphLike) -> Graph:
    """``query`` loaded, checked against ``data`` and in ``data``'s label codes."""
    q = as_graph(query, role="query")
    engine.check_pair(data, q)
    return reconcile(q, data)


@dataclass(frozen=True)
class Request:
    """A validated call: the backend, the data graph, its queries (checked and in the data graph's label codes),
    the semantics, the budget in bytes, the restriction as positions (one query only), the partitioning (None:
    no partitions) and the control that bounds its time and reports progress."""

    backend: Backend
    data: Graph
    queries: tuple[Graph, ...]
    semantics: Semantics
    budget: int
    restrict: dict[int, np.ndarray] | None = None
    partitioning: Partitioning | None = None
    control: engine.Control | None = None

    @property
    def query(self) -> Graph:
        return self.queries[0]

    def symmetry(self, i: int = 0) -> Symmetry:
        """How query ``i``'s count breaks symmetry (unique counts divide by ``|Aut(Q)|``)."""
        return symmetry(self.queries[i], self.semantics)

    @property
    def less_than(self) -> tuple[tuple[int, int], ...]:
        """The symmetry-breaking constraints of a listing of the one query."""
        return self.symmetry().less_than


def prepare(data: GraphLike, queries: GraphLike | list[GraphLike], semantics: Semantics,
            resources: Resources = DEFAULT_RESOURCES, *, restrict: Restrict | None = None,
            partitioning: Partitioning | None = None, progress: Callable[[int, int], None] | None = None) -> Request:
    """The :class:`Request` of one call, or the first error in its arguments, before any work starts.

    ``queries`` is one query or a list; ``restrict`` (query node name -> allowed data node names) takes one.

    Raises:
        TypeError, ValueError: an argument of the wrong type or range, or a pair of :data:`CONFLICTS`.
        GraphError, GraphFormatError: a graph that cannot be read or matched.
    """
    check_conflicts({"restrict": restrict, "unique": semantics.unique, "partitions": partitioning,
                     "progress": progress})
    be, budget = resources.engine()
    control = deadline(resources.timeout, progress)
    d = as_graph(data, role="data")
    many = isinstance(queries, list)
    qs = tuple(query_for(d, q) for q in (queries if isinstance(queries, list) else [queries]))
    if restrict is not None and many:
        raise ValueError("restrict names the nodes of one query: pass one query")
    allowed = restrict_positions(d, qs[0], restrict) if qs else None
    return Request(be, d, qs, semantics, budget, allowed, partitioning, control)


def restrict_positions(data: Graph, query: Graph, restrict: Restrict | None) -> dict[int, np.ndarray] | None:
    """``restrict`` (query node name -> data node names) as positions (query vertex -> sorted data vertices).

    Raises:
        GraphError: a name that is no node of its graph.
        TypeError: ``restrict`` is not a mapping of iterables.
    """
    if restrict is None:
        return None
    if not isinstance(restrict, Mapping):
        raise TypeError(f"restrict must be a dict {{query node: allowed data nodes}}, not {type(restrict).__name__}")
    out: dict[int, np.ndarray] = {}
    for name, allowed in restrict.items():
        if isinstance(allowed, (str, bytes)) or not isinstance(allowed, Iterable):
            raise TypeError(f"restrict[{name!r}] must be a collection of data nodes, not {type(allowed).__name__}")
        (u,) = query.positions([name], what="restrict names query node").tolist()
        out[u] = np.unique(data.positions(allowed, what=f"restrict[{name!r}] names data node"))
    return out
