"""Automorphisms of a query graph that respect vertex labels, edge labels and direction.

An automorphism is an embedding of the query into itself (an injective edge-preserving map of a finite graph
onto itself is a bijection that maps edges onto edges), so the engine itself finds them.  Rather than listing
the whole group, which can be huge (a k-clique has k! automorphisms), we build a stabiliser chain: for vertices
``v1, v2, ...`` the orbit of ``v_i`` under the automorphisms fixing ``v1..v_{i-1}``.  Then

* ``|Aut(Q)|`` is the product of the orbit sizes (orbit-stabiliser theorem), and
* the conditions ``f(v_i) < f(x)`` for every ``x`` in the orbit of ``v_i`` (other than ``v_i``) keep exactly one
  embedding of every matched subgraph (Grochow & Kellis, RECOMB 2007), which is how ``unique=True`` counts and
  lists without dividing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.query_plan import MatchOptions

_BUDGET = 64 << 20


@dataclass(frozen=True)
class StabilizerChain:
    """``levels[i] = (v_i, orbit of v_i under the stabiliser of v_1..v_{i-1})``; trivial tail levels omitted."""

    levels: tuple[tuple[int, tuple[int, ...]], ...]

    @property
    def order(self) -> int:
        """``|Aut(Q)|``."""
        size = 1
        for _, orbit in self.levels:
            size *= len(orbit)
        return size

    def symmetry_breaking(self) -> tuple[tuple[int, int], ...]:
        """Pairs ``(a, b)`` meaning ``f(a) < f(b)`` that keep one embedding per matched subgraph."""
        return tuple((v, x) for v, orbit in self.levels for x in orbit if x != v)


def _exists(query: Graph, pins: dict[int, int], limit: int) -> int:
    """How many automorphisms (up to ``limit``) send each pinned vertex to its image."""
    restrict = {u: np.array([x]) for u, x in pins.items()}
    found = engine.iter_matches(get_backend("numpy"), query, query, MatchOptions(), budget=_BUDGET, limit=limit,
                                restrict=restrict)
    return sum(rows.shape[0] for rows in found)


def stabilizer_chain(query: Graph) -> StabilizerChain:
    """The stabiliser chain of ``query``'s label-preserving automorphism group (cached on the graph)."""
    cached = query._derived.get("stabilizer_chain")
    if cached is not None:
        return cached
    engine.check_pair(query, query)
    labels = query.vertex_labels
    fixed: dict[int, int] = {}
    levels = []
    for v in range(query.n):
        if _exists(query, fixed, limit=2) < 2:
            break  # only the identity fixes the vertices chosen so far
        orbit = [v]
        for x in range(query.n):
            if x != v and labels[x] == labels[v] and _exists(query, {**fixed, v: x}, limit=1):
                orbit.append(x)
        levels.append((v, tuple(orbit)))
        fixed[v] = v
    chain = StabilizerChain(tuple(levels))
    query._derived["stabilizer_chain"] = chain
    return chain


def automorphism_count(query: Graph) -> int:
    """``|Aut(Q)|`` under vertex labels, edge labels and direction."""
    return stabilizer_chain(query).order


def automorphisms(query: Graph) -> np.ndarray:
    """Every automorphism as a row ``perm`` with ``perm[u]`` the image of ``u`` (use on small groups only)."""
    rows = list(engine.iter_matches(get_backend("numpy"), query, query, MatchOptions(), budget=_BUDGET))
    return np.concatenate(rows) if rows else np.zeros((0, query.n), np.int64)
