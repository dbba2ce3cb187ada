"""The program of a depth-first set-intersection search: one level per query vertex, in a fixed order.

A search maps level 0 and 1 (the first query edge) from one data edge, its *task*, and each later level ``i``
from the set

    ``C_i = {x : x in N(v_j, e_ji) for every earlier neighbour j, label(x) = label(u_i), lo_i < x < hi_i,
    x != v_j for every earlier non-neighbour j}``

where ``lo_i`` is the largest image that symmetry breaking puts below ``u_i`` and ``hi_i`` the smallest above it
(images are ranks: :mod:`distsm.kernels.ranked`).  Sets are built by intersecting sorted runs, never as tables:
the last level is only counted.  Two savings need no change of semantics:

* **reuse**: where an earlier level ``p``'s neighbours are a subset of ``i``'s, ``C_i`` starts from the stored
  ``C_p`` (a clique's levels each intersect one more run) if ``p``'s bounds are implied by ``i``'s and its label
  test is ``i``'s or none.
* **pair tail**: where the last query vertex ``b`` is not adjacent to the one before it, ``a``, ``C_b`` does not
  depend on ``v_a``; both sets are built once per prefix and each ``x`` of ``C_a`` adds the entries of ``C_b`` it
  admits (``y > x``, ``y < x`` or ``y != x``) by one binary search (a diamond's two tips: ``O(c log c)`` per edge
  instead of ``O(c^2)``).

The words (int32) are what both backends read: ``HEAD_WORDS`` of header ``[levels, pair tail, pair relation,
first edge's run]``, then ``LEVEL_WORDS`` per level: ``[label or -1, neighbour mask, lower mask, upper mask,
distinct mask, reused level or -1, mask of the runs still to intersect, the run (its offset among a vertex's runs:
:mod:`distsm.kernels.ranked`) from each earlier level...]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from distsm.graph import Graph
from distsm.kernels.cuda_modules import DFS_HEAD_WORDS, DFS_LEVEL_WORDS, DFS_MAX_LEVELS
from distsm.kernels.order import query_adjacency

#: Query vertices a search takes at most (its kernel keeps a fixed per-warp stack of this depth).
MAX_LEVELS = DFS_MAX_LEVELS
HEAD_WORDS = DFS_HEAD_WORDS
LEVEL_WORDS = DFS_LEVEL_WORDS

Pairs = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class DfsProgram:
    """A search of a query numbered in its levels' order: ``words`` as the module docstring lays them out (the
    symmetry breaking transitively closed into each level's masks), ``pair_tail`` whether its last two levels are
    counted together."""

    words: np.ndarray
    pair_tail: bool

    @property
    def levels(self) -> int:
        return int(self.words[0])

    def level(self, i: int) -> np.ndarray:
        """The words of level ``i``."""
        return self.words[HEAD_WORDS + i * LEVEL_WORDS:HEAD_WORDS + (i + 1) * LEVEL_WORDS]

    @property
    def clique(self) -> bool:
        """Whether this is a clique of at least 3 levels with each level adjacent to and above every earlier one,
        by one run offset (the header's), and no label test past level 0: the programs the device counts by bit
        rows (``clique_count`` in ``kernels/cuda/dfs.cu``)."""
        k = self.levels
        if k < 3 or self.pair_tail:
            return False
        run = int(self.words[3])
        for i in range(1, k):
            label, nb, lower, upper, distinct = (int(w) for w in self.level(i)[:5])
            every = (1 << i) - 1
            if (label, nb, lower, upper, distinct) != (-1, every, every, 0, 0):
                return False
            if any(int(w) != run for w in self.level(i)[7:7 + i]):
                return False
        return True


def supported(query: Graph) -> str:
    """Why a depth-first search cannot count ``query`` ("" when it can)."""
    if not 2 <= query.n <= MAX_LEVELS:
        return f"{query.n} query vertices (a depth-first search takes 2 to {MAX_LEVELS})"
    for u, row in enumerate(query_adjacency(query)):
        ws = [w for w, _ in row]
        if len(ws) != len(set(ws)):
            return f"query vertex {u} has two edges to one neighbour (one run per level pair)"
    return ""


def search_order(query: Graph) -> list[int]:
    """A connected order: the query edge whose endpoints have the most neighbours, then repeatedly the vertex with
    the most neighbours already placed (ties: more neighbours in all, then the lower id), so that later sets
    intersect more runs and shrink."""
    adj = [{w for w, _ in row} for row in query_adjacency(query)]
    deg = [len(a) for a in adj]
    first = max(((deg[u] + deg[w], max(deg[u], deg[w]), -min(u, w), u if deg[u] >= deg[w] else w,
                  w if deg[u] >= deg[w] else u) for u in range(query.n) for w in adj[u]), default=None)
    if first is None:
        return list(range(query.n))
    order = [first[3], first[4]]
    while len(order) < query.n:
        placed = set(order)
        best = max((len(adj[u] & placed), deg[u], -u) for u in range(query.n) if u not in placed and adj[u] & placed)
        order.append(-best[2])
    return order


def renumbered(query: Graph, order: Sequence[int]) -> Graph:
    """``query`` with vertex ``order[i]`` renamed ``i`` (labels, edge labels and direction kept)."""
    pos = np.empty(query.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(query.n)
    return Graph(query.n, pos[query.edge_src], pos[query.edge_dst], np.asarray(query.edge_labels),
                 np.asarray(query.vertex_labels)[np.asarray(order, dtype=np.int64)], query.directed,
                 vocabulary=query.vocabulary)


def closure(pairs: Pairs, n: int) -> Pairs:
    """The transitive closure of the order ``pairs`` (``(a, b)``: ``a < b``) over ``n`` elements."""
    below = [[False] * n for _ in range(n)]
    for a, b in pairs:
        below[a][b] = True
    for k in range(n):
        for i in range(n):
            if below[i][k]:
                for j in range(n):
                    if below[k][j]:
                        below[i][j] = True
    return tuple((i, j) for i in range(n) for j in range(n) if below[i][j])


def program(query: Graph, less_than: Pairs, *, any_label: bool = False, slots: tuple[int, ...] = ()) -> DfsProgram:
    """The search of ``query`` level by level in its own vertex order (renumber it first: :func:`renumbered`),
    keeping only matches with ``f(a) < f(b)`` for every pair of ``less_than``.  ``any_label`` drops the vertex
    label tests (every data vertex has the query's one label).  ``slots``: the ranked graph's neighbour slots
    (:mod:`distsm.kernels.ranked`); where runs are split by neighbour label, each level reads the runs of its own
    label and tests no label (level 0 keeps its label: it picks the tasks' first vertices)."""
    k = query.n
    if supported(query):
        raise ValueError(supported(query))
    adj = query_adjacency(query)
    labels = [-1 if any_label else int(x) for x in np.asarray(query.vertex_labels)]
    split = [bool(slots) and labels[i] in slots for i in range(k)]
    # The run of v_j that holds v_w: its edge label's, and within it the slot of w's label where runs are split (a
    # label no data vertex has reads slot 0 and keeps its test, which nothing passes).
    elabel = {(j, w): e * max(len(slots), 1) + (slots.index(labels[w]) if split[w] else 0)
              for j, row in enumerate(adj) for w, e in row}
    labels = [-1 if split[i] and i > 0 else labels[i] for i in range(k)]
    lt = closure(tuple(less_than), k)
    nb = [sum(1 << j for j in range(i) if (j, i) in elabel) for i in range(k)]
    lower = [sum(1 << j for j in range(i) if (j, i) in lt) for i in range(k)]
    upper = [sum(1 << j for j in range(i) if (i, j) in lt) for i in range(k)]
    for i in range(1, k):
        if not nb[i]:
            raise ValueError(f"level {i} has no earlier neighbour: the order is not connected")
    pair_tail = k >= 4 and not nb[k - 1] >> (k - 2) & 1
    rel = 0
    if pair_tail:
        a, b = k - 2, k - 1
        rel = 1 if (a, b) in lt else -1 if (b, a) in lt else 0
        lower[b] &= ~(1 << a)
        upper[b] &= ~(1 << a)
    words = np.zeros(HEAD_WORDS + k * LEVEL_WORDS, dtype=np.int32)
    words[:HEAD_WORDS] = [k, int(pair_tail), rel, elabel[(0, 1)]]
    for i in range(k):
        distinct = sum(1 << j for j in range(i) if not nb[i] >> j & 1)
        if pair_tail and i == k - 1:
            distinct &= ~(1 << (k - 2))
        reuse = _reusable(i, nb, lower, upper, labels, elabel, k, pair_tail) if i >= 2 else -1
        extra = nb[i] & ~(nb[reuse] if reuse >= 0 else 0)
        row = [labels[i], nb[i], lower[i], upper[i], distinct, reuse, extra]
        row += [elabel.get((j, i), 0) for j in range(MAX_LEVELS)]
        at = HEAD_WORDS + i * LEVEL_WORDS
        words[at:at + LEVEL_WORDS] = row
    return DfsProgram(words, pair_tail)


def _reusable(i: int, nb: list[int], lower: list[int], upper: list[int], labels: list[int],
              elabel: dict[tuple[int, int], int], k: int, pair_tail: bool) -> int:
    """The stored level whose set ``C_i`` may start from (see the module docstring), or -1: the one with the most
    neighbours among those that qualify.  Stored levels are 2 .. k - 2 (and k - 1 under a pair tail, which
    builds ``C_{k-2}`` first)."""
    best, most = -1, 0
    last_stored = k - 1 if pair_tail else k - 2
    for p in range(2, min(i, last_stored + 1)):
        if nb[p] & ~nb[i] or not nb[p]:
            continue
        if any(elabel[(j, p)] != elabel[(j, i)] for j in range(p) if nb[p] >> j & 1):
            continue
        if lower[p] & ~lower[i] or upper[p] & ~upper[i]:
            continue
        if labels[p] not in (-1, labels[i]):
            continue
        count = bin(nb[p]).count("1")
        if count > most:
            best, most = p, count
    return best
