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

from distsm.graph import Graph

OrderFunction = Callable[..., list[int]]


def query_adjacency(query: Graph) -> list[list[tuple[int, int]]]:
    """``adj[u]`` = sorted list of ``(w, effective label)`` with ``w in N(u, e)``."""
    out: list[list[tuple[int, int]]] = []
    for u in range(query.n):
        lo, hi = int(query.indptr[u]), int(query.indptr[u + 1])
        out.append(list(zip(query.neighbors[lo:hi].tolist(), query.neighbor_labels[lo:hi].tolist())))
    return out


def gsi_order(query: Graph, candidate_sizes: Sequence[int], label_entries: dict[int, int], n_data: int,
              prefix: Sequence[int] = ()) -> list[int]:
    """GSI-style greedy join order (see module docstring); ``prefix`` fixes the first vertices."""
    adj = query_adjacency(query)
    nq = query.n
    deg = [len(a) for a in adj]
    if prefix:
        order = list(prefix)
    else:
        order = [min(range(nq), key=lambda u: (candidate_sizes[u] / max(deg[u], 1), -deg[u], u))]
    placed = set(order)
    n2 = float(max(n_data, 1)) ** 2
    while len(order) < nq:
        best, best_key = -1, None
        for u in range(nq):
            if u in placed:
                continue
            links = [e for w, e in adj[u] if w in placed]
            if not links:
                continue
            log_est = math.log(max(candidate_sizes[u], 1))
            for e in links:
                log_est += math.log(max(label_entries.get(e, 0), 1) / n2)
            key = (log_est, -len(links), u)
            if best_key is None or key < best_key:
                best, best_key = u, key
        if best < 0:
            raise ValueError("the query graph is not connected")
        order.append(best)
        placed.add(best)
    return order
