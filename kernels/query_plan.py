"""The per-level join plan of one query: what each level checks, in which column of the partial-match table.

Level ``i`` extends rows whose columns ``0..i-1`` hold the data vertices of ``order[0..i-1]``.  For the new
vertex ``u = order[i]`` the plan lists its *linking edges* (earlier vertices ``w`` with ``u in N_Q(w, e)``); the
one with the rarest data label becomes the *first edge*, whose run ``N(f(w), e)`` bounds the row's output
(Prealloc-Combine), and the others become membership checks.  Columns of earlier vertices not adjacent to ``u``
need an injectivity check (adjacent ones differ automatically: the data graph has no self loops) and, in induced
mode, a non-edge check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from distsm.graph import Graph
from distsm.kernels.order import OrderFunction, gsi_order, query_adjacency


@dataclass(frozen=True)
class MatchOptions:
    """Matching semantics.  See DESIGN §1 / the README."""

    induced: bool = False
    homomorphism: bool = False

    def describe(self) -> str:
        base = "homomorphism" if self.homomorphism else "embedding"
        return f"{base}, {'induced' if self.induced else 'non-induced'}"


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
               options: MatchOptions, less_than: tuple[tuple[int, int], ...] = (),
               order_function: OrderFunction = gsi_order, prime_edge: int | None = None,
               spanning_only: bool = False) -> QueryPlan:
    """Plan the join of ``query``.

    ``less_than`` holds symmetry-breaking pairs ``(a, b)``: only matches with ``f(a) < f(b)`` are kept.
    ``prime_edge`` (a query edge index) plans a spanning search: the order starts with that edge's endpoints,
    level 1 extends through cross edges only, and every step carries DUPREMOVE checks.  ``spanning_only`` keeps
    only matches that span two or more parts (the global alternative to per-edge spanning searches).
    """
    prime = None
    prefix: tuple[int, ...] = ()
    edge_id: dict[tuple[int, int], int] = {}
    if prime_edge is not None:
        edge_id = query_edge_index(query)
        a, b = int(query.edge_src[prime_edge]), int(query.edge_dst[prime_edge])
        if not query.directed and candidate_sizes[b] < candidate_sizes[a]:
            a, b = b, a
        prefix = (a, b)
        prime = PrimeEdge(prime_edge, query.directed)
    order = order_function(query, candidate_sizes, label_entries, n_data, prefix=prefix)
    adj = query_adjacency(query)
    col_of = [0] * len(order)
    for i, u in enumerate(order):
        col_of[u] = i
    labels = query.vertex_labels.tolist()
    flip = 1 if query.directed else 0
    # Each vertex's linking edges as seen from the other end (the reverse arc's label, e ^ 1, when directed),
    # ranked by the rarest label, then by column, then by adjacency order (k).
    seen = {e: (label_entries.get(e ^ flip, 0), e ^ flip) for e in set(query.neighbor_labels.tolist())}
    same_label: dict[int, list[int]] = {labels[order[0]]: [0]}  # label -> columns of that label so far
    steps = []
    last = len(order) - 1
    for i in range(1, len(order)):
        u = order[i]
        ranked = sorted([(seen[e][0], c, k, seen[e][1]) for k, (w, e) in enumerate(adj[u]) if (c := col_of[w]) < i])
        links = [(col, e) for _, col, _, e in ranked]
        cross_first = False
        dup: tuple[tuple[int, int, int], ...] = ()
        if prime is not None:
            arcs = []
            for col, e in links:
                w = order[col]
                if not query.directed:
                    arcs.append((col, UNDIRECTED, edge_id[(w, u)]))
                elif e % 2 == 0:
                    arcs.append((col, ARC_TO_NEW, edge_id[(w, u)]))
                else:
                    arcs.append((col, ARC_FROM_NEW, edge_id[(u, w)]))
            if i == 1:
                # The prime edge itself is the first edge of level 1, walked through cross edges only.
                k = next(x for x, arc in enumerate(arcs) if arc[2] == prime.edge_index)
                links.insert(0, links.pop(k))
                arcs.pop(k)
                cross_first = True
            dup = tuple(arcs)
        # Candidates carry their query vertex's label, so only columns of u's label can repeat a data vertex.
        columns = same_label.setdefault(labels[u], [])
        distinct: tuple[int, ...] = ()
        if columns and not options.homomorphism:
            linked_cols = {c for c, _ in links}
            distinct = tuple(c for c in columns if c not in linked_cols)
        columns.append(i)
        pair_checks: tuple[tuple[int, int], ...] = ()
        if options.induced:
            counts = {c: 0 for c in range(i)}
            for w, _ in adj[u]:
                if col_of[w] < i:
                    counts[col_of[w]] += 1
            # Undirected graphs hold at most one entry per pair, so a linked pair needs no count check.
            pair_checks = tuple((c, k) for c, k in counts.items() if k == 0 or query.directed)
        gt: tuple[int, ...] = ()
        lt: tuple[int, ...] = ()
        if less_than:
            gt = tuple(col_of[a] for a, b in less_than if b == u and col_of[a] < i)
            lt = tuple(col_of[b] for a, b in less_than if a == u and col_of[b] < i)
        # Positional: keywords cost a third of the construction.
        steps.append(Step(u, links[0][0], links[0][1], tuple(links[1:]), distinct, pair_checks, gt, lt, cross_first,
                          dup, spanning_only and i == last))
    return QueryPlan(order=tuple(order), steps=tuple(steps), prime=prime)
