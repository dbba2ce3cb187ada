"""Join orders: which query vertex is matched at each level.

``gsi_order`` follows GSI: start at the vertex with the fewest candidates per query edge, then repeatedly add the
connected vertex whose extension is expected to produce the fewest rows.  The estimate multiplies the vertex's
candidate count by the selectivity of each linking edge, ``entries(e) / n**2`` (the chance that a random data pair
is joined through effective label ``e``), so rare edge labels and vertices with many linking edges come first.

An order function takes ``(query, candidate_sizes, label_entries, n_data, prefix=())`` and returns a permutation
of the query's vertices that starts with ``prefix`` and in which every vertex after the first is adjacent to an
earlier one.  The planner of the
partitioned search reuses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from distsm import caches
from distsm.graph import Graph

OrderFunction = Callable[..., list[int]]


_ADJACENCY = caches.cache("query adjacency", "query Graph -> its rows as lists of (neighbour, effective label)")


def query_adjacency(query: Graph) -> list[list[tuple[int, int]]]:
    """``adj[u]`` = sorted list of ``(w, effective label)`` with ``w in N(u, e)`` (cached on the query)."""
    cached: list[list[tuple[int, int]]] | None = _ADJACENCY.get(query)
    if cached is None:
        # One conversion of each array, then slices of Python lists: per-row array slices cost more on queries.
        ptr = query.indptr.tolist()
        pairs = list(zip(query.neighbors.tolist(), query.neighbor_labels.tolist()))
        cached = [pairs[ptr[u]:ptr[u + 1]] for u in range(query.n)]
        _ADJACENCY.put(query, cached)
    return cached


def gsi_order(query: Graph, candidate_sizes: Sequence[int], label_entries: dict[int, int], n_data: int,
              prefix: Sequence[int] = ()) -> list[int]:
    """GSI-style greedy join order (see module docstring); ``prefix`` fixes the first vertices.

    Scores are kept incrementally: placing ``v`` adds the log-selectivity of each edge ``(v, w)`` to ``w``'s
    estimate (an arc is one entry in each endpoint's row, so both ends see the same selectivity).
    """
    adj = query_adjacency(query)
    nq = query.n
    if prefix:
        order = list(prefix)
    else:
        order = [min([(candidate_sizes[u] / (len(row) or 1), -len(row), u) for u, row in enumerate(adj)])[2]]
    n2 = float(max(n_data, 1)) ** 2
    # log(max(c, 1)) without a call per vertex: log(1) is 0.0 exactly.
    log_est = [math.log(c) if c > 1 else 0.0 for c in candidate_sizes]
    log_sel = {e: math.log(max(label_entries.get(e, 0), 1) / n2) for e in set(query.neighbor_labels.tolist())}
    links = [0] * nq
    placed = [False] * nq
    frontier: set[int] = set()  # unplaced vertices linked to a placed one
    v = -1
    for k in range(nq):
        if k < len(order):
            v = order[k]
        elif not frontier:
            raise ValueError("the query graph is not connected")
        else:
            # Tuples rather than a key function: this runs once per frontier vertex and level.
            v = min([(log_est[u], -links[u], u) for u in frontier])[2]
            order.append(v)
        placed[v] = True
        frontier.discard(v)
        for w, e in adj[v]:
            log_est[w] += log_sel[e]
            links[w] += 1
            if not placed[w]:
                frontier.add(w)
    return order
