"""Which query vertices may trail a count, and the most promising sets of them.

A *trailing set* (see :mod:`distsm.kernels.count_plan`) is a non-empty independent set of query vertices whose
complement, the core, is non-empty and connected, of at most a given number of vertices, holding no forced start
and, for injective counts, at most a given number of vertices of one label.  Vertex sets are bit masks (bit ``u``:
vertex ``u``): a connectivity check is a few word operations per vertex.

The planner samples only *maximal* trailing sets (growing a trailing set never adds join levels), the largest
first, then those that leave the vertices with the most candidates to counting.  A dense 24-vertex query has
thousands of trailing sets and a 32-vertex one far more: :meth:`TrailingSets.most_promising` finds the best ones
by a branch-and-bound search instead of listing them all.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from distsm.graph import Graph
from distsm.kernels.order import query_adjacency

#: Trailing sets listed at most, and search nodes (sets tried) at most: a bound for queries whose vertices tie in
#: promise (gMatch's 12-vertex queries have tens to hundreds of trailing sets, a dense 24-vertex query many
#: thousands).
MAX_NODES = 4096


def members(mask: int) -> list[int]:
    """The vertices of a bit mask (bit u: vertex u), in order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def neighbour_masks(query: Graph) -> list[int]:
    """Each query vertex's neighbours as a bit mask."""
    return [sum(1 << w for w in {w for w, _ in arcs}) for arcs in query_adjacency(query)]


def reaches(nbrs: list[int], core: int, start: int, targets: int) -> bool:
    """Whether a search from the vertices ``start`` inside ``core`` reaches all of ``targets`` (``nbrs``: each
    vertex's neighbours as a mask)."""
    seen = frontier = start
    while frontier and targets & ~seen:
        reached = 0
        while frontier:
            low = frontier & -frontier
            reached |= nbrs[low.bit_length() - 1]
            frontier ^= low
        frontier = reached & core & ~seen
        seen |= frontier
    return not targets & ~seen


@dataclass
class TrailingSets:
    """The trailing sets of ``query``: at most ``most`` vertices, none of ``excluded`` (a mask), and at most
    ``group`` vertices of one label unless ``group`` is None."""

    query: Graph
    most: int
    excluded: int = 0
    group: int | None = None
    nbrs: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.nbrs = neighbour_masks(self.query)
        self.everything = (1 << self.query.n) - 1
        by_label: dict[int, int] = {}
        for u, x in enumerate(self.query.vertex_labels):
            by_label[int(x)] = by_label.get(int(x), 0) | 1 << u
        # Only a label with more than `group` query vertices can hold too large a group.
        self.large = [] if self.group is None else [m for m in by_label.values() if m.bit_count() > self.group]
        self.connected = reaches(self.nbrs, self.everything, 1, self.everything)
        # Neighbours that reach one another among themselves do so in every core (which holds them all): for those
        # vertices the check needs no search (a dense 24-vertex query makes thousands of checks).
        self.settled = [reaches(self.nbrs, m, m & -m, m) for m in self.nbrs]

    def valid(self, mask: int) -> bool:
        """Whether ``mask`` is a trailing set."""
        size = mask.bit_count()
        if not 0 < size <= self.most or mask & self.excluded or not self._groups_fit(mask):
            return False
        if any(mask & self.nbrs[u] for u in members(mask)):
            return False
        core = self.everything & ~mask
        return bool(core) and reaches(self.nbrs, core, core & -core, core)

    def _groups_fit(self, mask: int) -> bool:
        return all((mask & g).bit_count() <= (self.group or 0) for g in self.large)

    def _step(self, chosen: int, v: int) -> bool | None:
        """Growing ``chosen`` (a trailing set, or in a query that is not connected any independent set) by ``v`` (no
        neighbour of it, not in it, not excluded): whether that makes a trailing set, or None where no set grown
        from it can be one.  Too large a label group stays too large; and in a connected query, removing vertices
        never joins the core's components, and each component but one would have to move into the set whole,
        which independence forbids."""
        grown = chosen | 1 << v
        if self.large and not self._groups_fit(grown):
            return None
        core = self.everything & ~grown
        if not self.connected:
            return bool(core) and reaches(self.nbrs, core, core & -core, core)
        # The core before v left was connected and v's neighbours all lie in it: without v it stays connected
        # exactly when they still reach one another.
        if core and (self.settled[v] or reaches(self.nbrs, core, self.nbrs[v] & -self.nbrs[v], self.nbrs[v])):
            return True
        return None

    def most_promising(self, count: int, weights: list[float]) -> list[int]:
        """The first ``count`` maximal trailing sets (no trailing set grows them by one vertex) in order of promise:
        the most vertices first, then the largest sum of ``weights`` (the planner's: log candidates per vertex),
        then by their sorted vertices.

        Sets of the most vertices allowed are maximal and come first: where there are ``count`` of them, a
        branch-and-bound search finds the best without listing the others (:meth:`heaviest`).  Otherwise the first
        :data:`MAX_NODES` trailing sets in order of their sorted vertices are listed and the maximal ones ranked.
        (Listing a few hundred sets first, to see whether the query has many, cost a dense query more than the
        search: design notes.)"""
        best = self.heaviest(self.most, count, weights)
        if len(best) >= count:
            return best

        def promise(mask: int) -> tuple[int, float, list[int]]:
            vertices = members(mask)
            return -len(vertices), -sum(weights[u] for u in vertices), vertices

        return heapq.nsmallest(count, self._maximal(self._every(MAX_NODES)), key=promise)

    def _maximal(self, masks: list[int]) -> list[int]:
        """The sets of ``masks`` that grow into no other one of them by one vertex: only a vertex outside a set and
        its neighbours can grow it."""
        kept = set(masks)
        found = []
        for mask in masks:
            free = self.everything & ~mask
            rest = mask
            while rest:
                low = rest & -rest
                free &= ~self.nbrs[low.bit_length() - 1]
                rest ^= low
            while free:
                low = free & -free
                if mask | low in kept:
                    break
                free ^= low
            else:
                found.append(mask)
        return found

    def _every(self, limit: int) -> list[int]:
        """The first ``limit`` trailing sets in order of their sorted vertices."""
        found: list[int] = []

        def grow(chosen: int, size: int, blocked: int, first: int) -> None:
            for v in range(first, self.query.n):
                if blocked >> v & 1 or len(found) >= limit:
                    continue
                valid = self._step(chosen, v)
                if valid is None:
                    continue
                grown = chosen | 1 << v
                if valid:
                    found.append(grown)
                if size + 1 < self.most:
                    grow(grown, size + 1, blocked | self.nbrs[v] | 1 << v, v + 1)

        grow(0, 0, self.excluded, 0)
        return found

    def heaviest(self, size: int, count: int, weights: list[float]) -> list[int]:
        """The best ``count`` trailing sets of ``size`` vertices by weight, then sorted vertices: a depth-first
        search over vertices in order of falling weight that keeps the best sets found and cuts a branch whose
        weight, filled up with the heaviest vertices still free, cannot beat the worst of them (at most
        :data:`MAX_NODES` sets tried)."""
        order = sorted(range(self.query.n), key=lambda u: (-weights[u], u))
        kept: list[tuple[float, tuple[int, ...], int]] = []  # a min-heap: the worst kept set on top
        nodes = MAX_NODES

        def keep(mask: int) -> None:
            vertices = members(mask)
            # Equal sizes: the negated vertices order the heap's ties by falling vertices, the worst on top.
            entry = (sum(weights[u] for u in vertices), tuple(-u for u in vertices), mask)
            if len(kept) < count:
                heapq.heappush(kept, entry)
            elif entry > kept[0]:
                heapq.heapreplace(kept, entry)

        def grow(chosen: int, weight: float, chosen_size: int, blocked: int, first: int) -> None:
            nonlocal nodes
            need = size - chosen_size
            for i in range(first, len(order)):
                v = order[i]
                if blocked >> v & 1:
                    continue
                # The weight the branches from here can reach falls with i: once it cannot beat the worst set
                # kept, no later branch can either.
                bound, free = weight, 0
                for w in order[i:]:
                    if not blocked >> w & 1:
                        bound, free = bound + weights[w], free + 1
                        if free == need:
                            break
                if free < need or len(kept) == count and bound < kept[0][0] - 1e-9 or nodes <= 0:
                    return
                nodes -= 1
                valid = self._step(chosen, v)
                if valid is None:
                    continue
                if need > 1:
                    grow(chosen | 1 << v, weight + weights[v], chosen_size + 1, blocked | self.nbrs[v] | 1 << v,
                         i + 1)
                elif valid:
                    keep(chosen | 1 << v)

        grow(0, 0.0, 0, self.excluded, 0)
        return [mask for _, _, mask in sorted(kept, reverse=True)]
