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

from distsm import caches
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.order import query_adjacency
from distsm.kernels.query_plan import Constraints, MatchOptions

_BUDGET = 64 << 20
# Pinned searches want one or two rows: small chunks reach a complete row after little work.
_PINNED_BUDGET = 256 << 10


@dataclass(frozen=True)
class StabilizerChain:
    """``levels[i] = (v_i, orbit of v_i under the stabiliser of v_1..v_{i-1})``; trivial tail levels omitted.

    ``generators`` holds, for every level and orbit point ``x``, one automorphism (``perm[u]`` = image of
    ``u``) fixing ``v_1..v_{i-1}`` and sending ``v_i`` to ``x``; together they generate the whole group.
    """

    levels: tuple[tuple[int, tuple[int, ...]], ...]
    generators: tuple[tuple[int, ...], ...] = ()

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


def pinned_automorphisms(query: Graph, pins: dict[int, int], limit: int) -> np.ndarray:
    """Up to ``limit`` automorphisms (rows ``perm``) sending each pinned vertex ``u`` to ``pins[u]``."""
    restrict = {u: np.array([x]) for u, x in pins.items()}
    found = list(engine.iter_matches(get_backend("numpy"), query, query, MatchOptions(), budget=_PINNED_BUDGET,
                                     limit=limit, constraints=Constraints(restrict=restrict)))
    return np.concatenate(found) if found else np.zeros((0, query.n), np.int64)


_CHAINS = caches.cache("stabiliser chains", "query Graph -> the stabiliser chain of its automorphism group")


def stabilizer_chain(query: Graph) -> StabilizerChain:
    """The stabiliser chain of ``query``'s label-preserving automorphism group (cached on the graph)."""
    cached = _CHAINS.get(query)
    if cached is not None:
        return cached
    engine.check_pair(query, query)
    # Automorphisms preserve the stable colouring, so only vertices of v's colour can be in v's orbit; where every
    # vertex has its own colour (most labelled queries) the identity is the only automorphism, with no search
    # (each search below costs a millisecond or more).
    colour = _stable_colouring(query)
    if len(set(colour)) == query.n:
        return _CHAINS.put(query, StabilizerChain(()))
    size = [colour.count(c) for c in colour]
    fixed: dict[int, int] = {}
    levels = []
    generators = []
    symmetric: bool | None = None  # whether more than the identity fixes the vertices chosen so far (None: ask)
    for v in range(query.n):
        if symmetric is None:
            symmetric = pinned_automorphisms(query, fixed, limit=2).shape[0] >= 2
        if not symmetric:
            break
        orbit = [v]
        for x in range(query.n):
            if x == v or colour[x] != colour[v]:
                continue
            found = pinned_automorphisms(query, {**fixed, v: x}, limit=1)
            if found.shape[0]:
                orbit.append(x)
                generators.append(tuple(int(y) for y in found[0]))
        levels.append((v, tuple(orbit)))
        fixed[v] = v
        if size[v] > 1:
            symmetric = None  # fixing a vertex alone in its colour leaves the group as it was
    return _CHAINS.put(query, StabilizerChain(tuple(levels), tuple(generators)))


def _stable_colouring(query: Graph) -> list[int]:
    """Colour refinement: vertex labels, then each vertex's colour with the multiset of (effective edge label,
    neighbour's colour) of its adjacency, until no class splits."""
    adj = query_adjacency(query)
    colour = query.vertex_labels.tolist()
    classes = len(set(colour))
    while classes < query.n:
        keys = [(colour[u], tuple(sorted([(e, colour[w]) for w, e in row]))) for u, row in enumerate(adj)]
        ids = {key: i for i, key in enumerate(set(keys))}
        if len(ids) == classes:
            break
        colour, classes = [ids[key] for key in keys], len(ids)
    return colour


def automorphism_count(query: Graph) -> int:
    """``|Aut(Q)|`` under vertex labels, edge labels and direction."""
    return stabilizer_chain(query).order


def automorphisms(query: Graph) -> np.ndarray:
    """Every automorphism as a row ``perm`` with ``perm[u]`` the image of ``u`` (use on small groups only)."""
    rows = list(engine.iter_matches(get_backend("numpy"), query, query, MatchOptions(), budget=_BUDGET))
    return np.concatenate(rows) if rows else np.zeros((0, query.n), np.int64)
