"""The per-level join plan of one query: what each level checks, in which column of the partial-match table.

Level ``i`` extends rows whose columns ``0..i-1`` hold the data vertices of ``order[0..i-1]``.  For the new
vertex ``u = order[i]`` the plan lists its *linking edges* (earlier vertices ``w`` with ``u in N_Q(w, e)``); the
one with the rarest data label becomes the *first edge*, whose run ``N(f(w), e)`` bounds the row's output
(Prealloc-Combine), and the others become membership checks.  Columns of earlier vertices not adjacent to ``u``
need an injectivity check (adjacent ones differ automatically: the data graph has no self loops) and, in induced
mode, a non-edge check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from distsm.graph import Graph
from distsm.kernels.order import OrderFunction, gsi_order, query_adjacency

#: What ``restrict`` maps a query vertex to: allowed data vertices, or a ``range`` of allowed ids (cheap to ship).
Allowed = np.ndarray | range


@dataclass(frozen=True)
class MatchOptions:
    """Matching semantics.  See DESIGN §1 / the README."""

    induced: bool = False
    homomorphism: bool = False

    def describe(self) -> str:
        base = "homomorphism" if self.homomorphism else "embedding"
        return f"{base}, {'induced' if self.induced else 'non-induced'}"


@dataclass(frozen=True, eq=False)
class Constraints:
    """What a join must honour beyond its :class:`MatchOptions`.

    ``less_than`` holds symmetry-breaking pairs ``(a, b)``: only matches with ``f(a) < f(b)`` are kept.
    ``restrict`` narrows query vertices' images (query vertex -> allowed data vertices; applied to the
    candidates, not the plan).  ``prime_edge`` (a query edge index) plans a spanning search: the order starts
    with that edge's endpoints, level 1 extends through cross edges only, and every step carries DUPREMOVE
    checks.  ``spanning_only`` keeps only matches that span two or more parts (the global alternative to
    per-edge spanning searches).  ``order_function`` chooses the join order.
    """

    less_than: tuple[tuple[int, int], ...] = ()
    restrict: Mapping[int, Allowed] | None = None
    prime_edge: int | None = None
    spanning_only: bool = False
    order_function: OrderFunction = gsi_order


#: No constraint: every match of the semantics, the default order.
UNCONSTRAINED = Constraints()


# Not frozen: a plan builds one per level, and a frozen dataclass's __init__ costs twice as much (a tenth of a
# light query's planning).  Steps are never changed after build_plan makes them.
@dataclass(slots=True, weakref_slot=True)
class Step:
    """What level ``i`` of the join does (columns index the partial-match table)."""

    vertex: int
    first_col: int
    first_label: int
    checks: tuple[tuple[int, int], ...]          # (column, effective label): new vertex must be in N(M[col], label)
    distinct_cols: tuple[int, ...]               # columns the new vertex must differ from (injectivity)
    pair_checks: tuple[tuple[int, int], ...]     # (column, required entry count between new vertex and M[col])
    greater_than: tuple[int, ...]                # columns whose vertex must be smaller than the new one
    less_than: tuple[int, ...]                   # columns whose vertex must be larger than the new one
    # Inter-partition search only (see PrimeEdge):
    cross_first: bool = False                    # the first edge must be a cross edge (the prime edge itself)
    dup_checks: tuple[tuple[int, int, int], ...] = ()  # (column, ARC_* code, query edge index) per linking edge
    require_spanning: bool = False               # keep only rows whose vertices lie in two or more parts

    def relabelled(self, first_label: int, checks: tuple[tuple[int, int], ...]) -> Step:
        """This step reading its runs under other labels (a split index's numbering, see
        :mod:`~distsm.kernels.split_runs`).  Positional, as the plan builds steps: ``dataclasses.replace``
        introspects the fields on every call, a cost a light device count paid at every level."""
        return Step(self.vertex, self.first_col, first_label, checks, self.distinct_cols, self.pair_checks,
                    self.greater_than, self.less_than, self.cross_first, self.dup_checks, self.require_spanning)


#: How a linking edge between column vertex ``x`` and new vertex ``v`` is keyed as a data edge.
ARC_TO_NEW, ARC_FROM_NEW, UNDIRECTED = 1, 0, 2


@dataclass(frozen=True)
class PrimeEdge:
    """The query edge whose image is the smallest cross edge of every match a spanning search produces (PBE).

    Columns 0 and 1 hold its endpoints (in directed graphs the arc runs from column 0 to column 1).  Steps drop
    a row when another query edge maps to a cross edge ordered before the prime image (DUPREMOVE), or to the
    same data edge with a smaller query edge index (homomorphisms only), so each spanning match is produced by
    exactly one prime query edge.
    """

    edge_index: int
    directed: bool


@dataclass(frozen=True)
class QueryPlan:
    order: tuple[int, ...]
    steps: tuple[Step, ...] = field(repr=False)   # steps[i-1] extends level i-1 to level i
    prime: PrimeEdge | None = None

    @property
    def needs_partition(self) -> bool:
        """Whether the join filters by the partition of data vertices."""
        return self.prime is not None or any(step.require_spanning for step in self.steps)

    @property
    def inverse_order(self) -> list[int]:
        """Column of each query vertex in the partial-match table."""
        inv = [0] * len(self.order)
        for col, u in enumerate(self.order):
            inv[u] = col
        return inv


def query_edge_index(query: Graph) -> dict[tuple[int, int], int]:
    """``(a, b) -> index`` of each query edge (both orientations for undirected graphs)."""
    out = {}
    for j, (a, b) in enumerate(zip(query.edge_src.tolist(), query.edge_dst.tolist())):
        out[(a, b)] = j
        if not query.directed:
            out[(b, a)] = j
    return out


def build_plan(query: Graph, candidate_sizes: list[int], label_entries: dict[int, int], n_data: int,
               options: MatchOptions, constraints: Constraints = UNCONSTRAINED) -> QueryPlan:
    """Plan the join of ``query`` under ``options`` and ``constraints`` (see :class:`Constraints`);
    ``candidate_sizes`` and ``label_entries`` (adjacency entries per effective label) choose the order."""
    prime = None
    prefix: tuple[int, ...] = ()
    if constraints.prime_edge is not None:
        a, b = int(query.edge_src[constraints.prime_edge]), int(query.edge_dst[constraints.prime_edge])
        if not query.directed and candidate_sizes[b] < candidate_sizes[a]:
            a, b = b, a
        prefix = (a, b)
        prime = PrimeEdge(constraints.prime_edge, query.directed)
    order = constraints.order_function(query, candidate_sizes, label_entries, n_data, prefix=prefix)
    return QueryPlan(order=tuple(order), steps=_Steps(query, order, label_entries, options, constraints, prime).all(),
                     prime=prime)


class _Steps:
    """The steps of one plan (:func:`build_plan`), level by level in ``order``."""

    def __init__(self, query: Graph, order: list[int], label_entries: dict[int, int], options: MatchOptions,
                 constraints: Constraints, prime: PrimeEdge | None):
        self.query, self.order, self.options, self.constraints, self.prime = query, order, options, constraints, prime
        self.adj = query_adjacency(query)
        self.col_of = [0] * len(order)
        for i, u in enumerate(order):
            self.col_of[u] = i
        self.labels = query.vertex_labels.tolist()
        self.edge_id = query_edge_index(query) if prime is not None else {}
        flip = 1 if query.directed else 0
        # Each vertex's linking edges as seen from the other end (the reverse arc's label, e ^ 1, when directed),
        # ranked by the rarest label, then by column, then by adjacency order (k).
        self.seen = {e: (label_entries.get(e ^ flip, 0), e ^ flip) for e in set(query.neighbor_labels.tolist())}

    def all(self) -> tuple[Step, ...]:
        """Every level's step, in order (one loop over locals: a light query's plan is built on every count)."""
        order, col_of, seen, adj, labels = self.order, self.col_of, self.seen, self.adj, self.labels
        same_label: dict[int, list[int]] = {labels[order[0]]: [0]}  # label -> its columns so far
        injective, induced, prime = not self.options.homomorphism, self.options.induced, self.prime is not None
        less_than, last = self.constraints.less_than, len(order) - 1
        spanning_only = self.constraints.spanning_only
        steps = []
        for i in range(1, len(order)):
            u = order[i]
            ranked = sorted([(seen[e][0], c, k, seen[e][1]) for k, (w, e) in enumerate(adj[u]) if (c := col_of[w]) < i])
            links = [(col, e) for _, col, _, e in ranked]
            dup = self._arcs(i, u, links) if prime else ()
            # Candidates carry their query vertex's label, so only columns of u's label can repeat a data vertex.
            columns = same_label.setdefault(labels[u], [])
            distinct: tuple[int, ...] = ()
            if columns and injective:
                linked_cols = {c for c, _ in links}
                distinct = tuple(c for c in columns if c not in linked_cols)
            columns.append(i)
            gt: tuple[int, ...] = ()
            lt: tuple[int, ...] = ()
            if less_than:
                gt = tuple(col_of[a] for a, b in less_than if b == u and col_of[a] < i)
                lt = tuple(col_of[b] for a, b in less_than if a == u and col_of[b] < i)
            pairs = self._pair_checks(i, u) if induced else ()
            # Positional: keywords cost a third of the construction.
            steps.append(Step(u, links[0][0], links[0][1], tuple(links[1:]), distinct, pairs, gt, lt,
                              prime and i == 1, dup, spanning_only and i == last))
        return tuple(steps)

    def _arcs(self, i: int, u: int, links: list[tuple[int, int]]) -> tuple[tuple[int, int, int], ...]:
        """The DUPREMOVE checks of a spanning search's level ``i`` (one per linking edge but the prime edge);
        at level 1 moves the prime edge to the front of ``links``, walked through cross edges only."""
        arcs = []
        for col, e in links:
            w = self.order[col]
            if not self.query.directed:
                arcs.append((col, UNDIRECTED, self.edge_id[(w, u)]))
            elif e % 2 == 0:
                arcs.append((col, ARC_TO_NEW, self.edge_id[(w, u)]))
            else:
                arcs.append((col, ARC_FROM_NEW, self.edge_id[(u, w)]))
        if i == 1:
            assert self.prime is not None
            k = next(x for x, arc in enumerate(arcs) if arc[2] == self.prime.edge_index)
            links.insert(0, links.pop(k))
            arcs.pop(k)
        return tuple(arcs)

    def _pair_checks(self, i: int, u: int) -> tuple[tuple[int, int], ...]:
        """Induced joins' entry-count checks of ``u`` against the earlier columns."""
        counts = {c: 0 for c in range(i)}
        for w, _ in self.adj[u]:
            if self.col_of[w] < i:
                counts[self.col_of[w]] += 1
        # Undirected graphs hold at most one entry per pair, so a linked pair needs no count check.
        return tuple((c, k) for c, k in counts.items() if k == 0 or self.query.directed)
