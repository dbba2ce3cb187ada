"""The inter-partition plan (PBE §4): which spanning searches run, and how their results are shared.

Every match that spans partitions uses at least one cross edge; its *prime* query edge is the one mapped to the
smallest cross data edge.  One search per query edge finds the matches with that prime edge (DUPREMOVE makes
the searches disjoint).  Query edges related by an automorphism ``s`` (respecting labels and direction) form an
*edge group*: if ``f`` has prime edge ``e`` then ``f∘s⁻¹`` has prime edge ``s(e)``, a bijection, so only the
group's representative is searched and its results are REMAPped to the other members (shared execution; the
member sequences are the images of the representative's sequence, i.e. strict-equivalent).  Sharing is off for
homomorphisms (two query edges may share a data edge, which breaks the bijection) and for ``unique`` listing
(symmetry-breaking conditions are not invariant under ``s``).

Beyond PBE: when the per-group searches are estimated to cost more than one join over the whole graph, the plan
says so (``strategy == Strategy.GLOBAL``); that join then counts every match once, in place of the intra-partition
joins and the spanning searches (:func:`distsm.plan.execute.jobs`).  Both strategies are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from distsm.graph import Graph
from distsm.kernels.order import gsi_order, query_adjacency
from distsm.plan.automorphism import stabilizer_chain
from distsm.vocabulary import Strategy  # re-exported: the planner's result names it


@dataclass(frozen=True)
class SearchSequence:
    """One search: the prime query edge, its vertex order, and the automorphism that maps the group's
    representative onto it (``remap[u]`` = image of ``u``; the identity for the representative)."""

    prime_edge: int
    edge: tuple[int, int]
    order: tuple[int, ...]
    remap: tuple[int, ...]


@dataclass(frozen=True)
class EdgeGroup:
    """Query edges equivalent under automorphisms; only ``representative`` is searched."""

    representative: SearchSequence
    sequences: tuple[SearchSequence, ...]
    estimated_cost: float = 0.0

    @property
    def prime_edges(self) -> tuple[int, ...]:
        return tuple(s.prime_edge for s in self.sequences)


@dataclass(frozen=True)
class InterPartitionPlan:
    groups: tuple[EdgeGroup, ...]
    shared: bool
    strategy: Strategy = Strategy.PBE
    reason: str = ""
    spanning_fraction: float | None = None      # estimated share of matches that span partitions
    costs: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """JSON-ready: strategy, why, sharing, the prime edges of every group, the spanning fraction."""
        return {"strategy": self.strategy.value, "reason": self.reason, "shared": self.shared,
                "groups": [list(g.prime_edges) for g in self.groups], "spanning_fraction": self.spanning_fraction}


def _edge_key(query: Graph, a: int, b: int) -> tuple[int, int]:
    return (a, b) if query.directed else (min(a, b), max(a, b))


def edge_groups(query: Graph, shared: bool = True) -> list[list[tuple[int, tuple[int, ...]]]]:
    """Orbits of the query's edges under its automorphisms.

    Returns lists of ``(edge index, s)`` with ``s`` an automorphism mapping the orbit's first edge onto that edge.
    Without ``shared`` every edge is its own group.
    """
    identity = tuple(range(query.n))
    edges = [(int(a), int(b)) for a, b in zip(query.edge_src, query.edge_dst)]
    if not shared:
        return [[(j, identity)] for j in range(len(edges))]
    index = {_edge_key(query, a, b): j for j, (a, b) in enumerate(edges)}
    gens = stabilizer_chain(query).generators
    seen: dict[int, tuple[int, ...]] = {}
    groups = []
    for j in range(len(edges)):
        if j in seen:
            continue
        seen[j] = identity
        group = [(j, identity)]
        frontier = [j]
        while frontier:  # breadth-first over generator images, composing the maps on the way
            nxt = []
            for e in frontier:
                s = seen[e]
                a, b = edges[e]
                for g in gens:
                    f = index[_edge_key(query, g[a], g[b])]
                    if f not in seen:
                        seen[f] = tuple(g[s[u]] for u in range(query.n))
                        group.append((f, seen[f]))
                        nxt.append(f)
            frontier = nxt
        groups.append(group)
    return groups


def estimated_level_rows(query: Graph, order: list[int], sizes: list[int], label_entries: dict[int, int],
                         n_data: int, first_fraction: float = 1.0) -> list[float]:
    """Partial matches expected after each level of a join in ``order`` (the cost model).

    Level ``i`` multiplies by the new vertex's candidates and, per linking edge, the chance ``entries(e)/n²``
    that a data pair is joined by label ``e``; ``first_fraction`` scales level 1 (the cross-edge share for a
    spanning search).
    """
    adj = query_adjacency(query)
    n2 = float(max(n_data, 1)) ** 2
    rows = [float(sizes[order[0]])]
    placed = {order[0]}
    for i, u in enumerate(order[1:], start=1):
        est = rows[-1] * sizes[u]
        for w, e in adj[u]:
            if w in placed:
                est *= max(label_entries.get(e, 0), 1) / n2
        if i == 1:
            est *= first_fraction
        rows.append(est)
        placed.add(u)
    return rows


def inter_partition_plan(query: Graph, *, candidate_sizes: list[int] | None = None,
                         label_entries: dict[int, int] | None = None, n_data: int | None = None,
                         cross_fraction: float | None = None, homomorphism: bool = False,
                         unique: bool = False, share: bool = True) -> InterPartitionPlan:
    """Plan the spanning searches of ``query``.

    Without data statistics (``candidate_sizes`` etc.) the plan is structural: groups, sequences, remaps.  With
    them (the executor passes the data graph's), each group's representative is its cheapest sequence under the
    cost model, and the strategy is chosen by comparing the per-group searches with one global join.
    ``cross_fraction`` is the share of data edges that cross partitions.  ``share=False`` searches every query
    edge separately (the baseline shared execution is measured against).
    """
    shared = share and not homomorphism and not unique
    sizes = candidate_sizes if candidate_sizes is not None else [1] * query.n
    entries = label_entries if label_entries is not None else {}
    n = n_data if n_data is not None else 1
    frac = 1.0 if cross_fraction is None else cross_fraction
    groups = []
    for members in edge_groups(query, shared):
        options = []
        for j, s in members:
            a, b = int(query.edge_src[j]), int(query.edge_dst[j])
            if not query.directed and sizes[b] < sizes[a]:
                a, b = b, a
            order = gsi_order(query, sizes, entries, n, prefix=(a, b))
            cost = sum(estimated_level_rows(query, order, sizes, entries, n, frac)[1:])
            options.append((cost, j, s, (a, b), tuple(order)))
        cost, j_rep, s_rep, edge_rep, order_rep = min(options, key=lambda o: (o[0], o[1]))
        inv_rep = [0] * query.n
        for u, x in enumerate(s_rep):
            inv_rep[x] = u
        seqs = []
        for _, j, s, edge, _ in sorted(options, key=lambda o: o[1]):
            # t = s ∘ s_rep⁻¹ maps the representative's edge onto this one.
            t = tuple(s[inv_rep[u]] for u in range(query.n))
            seqs.append(SearchSequence(j, edge, tuple(t[u] for u in order_rep), t))
        rep = next(q for q in seqs if q.prime_edge == j_rep)
        groups.append(EdgeGroup(rep, tuple(seqs), cost))
    plan = InterPartitionPlan(tuple(groups), shared)
    if candidate_sizes is None or query.n < 2:
        return plan
    pbe_cost = sum(g.estimated_cost for g in groups)
    global_order = gsi_order(query, sizes, entries, n)
    global_cost = sum(estimated_level_rows(query, global_order, sizes, entries, n))
    spanning = 1.0 - (1.0 - frac) ** (query.n - 1)
    if global_cost < pbe_cost:
        strategy = Strategy.GLOBAL
        reason = (f"{len(groups)} spanning searches are estimated at {pbe_cost:.3g} partial matches, more than "
                  f"one global join ({global_cost:.3g})")
    else:
        strategy = Strategy.PBE
        reason = (f"{len(groups)} spanning searches are estimated at {pbe_cost:.3g} partial matches, no more "
                  f"than one global join ({global_cost:.3g})")
    return InterPartitionPlan(plan.groups, shared, strategy, reason,
                              round(spanning, 6) if math.isfinite(spanning) else None,
                              {"pbe": pbe_cost, "global": global_cost})
