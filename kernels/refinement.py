"""Candidate refinement (GraphQL/CECI-style arc consistency) and the candidate-edge index built over its result.

``v`` stays a candidate of ``u`` only while every query arc ``u -> w`` has at least one candidate edge from ``v``
(see :mod:`distsm.kernels.candidate_edges`).  Passes repeat until nothing changes or the pass budget is spent; every
candidate removed is one that can take part in no match, so counts are unchanged.  The data adjacency is read once
per query edge, from the end with fewer entries to read and, on graphs with several vertex labels, only among the
neighbours with the other end's label (:class:`~distsm.kernels.candidate_edges.LabelledRuns`); later passes filter
the candidate edges found then.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from distsm.graph import Graph
from distsm.kernels.array_ops import bincount, count_true, stable_order
from distsm.kernels.backend import Backend
from distsm.kernels.candidate_edges import (MATRIX_BYTES, POSITION_BYTES, ArcIndex, CandidateEdges, labelled_runs,
                                            position_map, query_arcs)
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex
from distsm.kernels.vertex_sets import bit_words, member

#: Refinement passes at most (each pass visits every query edge once; the first reads the data adjacency, the
#: others only filter the candidate edges found then, so a pass costs little next to the first).
REFINE_PASSES = 8


def build(backend: Backend, idx: DataIndex, query: Graph, candidates: Sequence[Any], *,
          passes: int = REFINE_PASSES, lookup_bytes: int = POSITION_BYTES + MATRIX_BYTES) -> CandidateEdges:
    """Refine ``candidates`` (sorted; up to ``passes`` passes) and build every arc's candidate edges over the
    result.

    Position maps and arc bit matrices take at most ``lookup_bytes`` (and :data:`POSITION_BYTES` and
    :data:`MATRIX_BYTES`); lookups they cannot serve are binary searches.

    The data adjacency is read once per query edge, from the end whose candidates have fewer adjacency entries
    with the edge's label (an arc and its reverse hold the same data edges, the reverse one with effective label
    ``e ^ 1`` on directed graphs): later passes only drop the edges whose endpoints lost their candidacy, so they
    cost the candidate edges, not the adjacency they were found in.

    Refinement works on positions in the input candidates: a query vertex's current candidates are a mask over
    them, a vertex's supported candidates are marked by one scatter (no sort), and the edges read in adjacency
    order are already sorted for the arc they were read along (only the reverse arc needs a stable sort)."""
    refinement = _Refinement(backend, idx, query, candidates, lookup_bytes)
    done = refinement.refine(passes)
    return refinement.index(done, lookup_bytes)


class _Refinement:
    """The state of one :func:`build`: per query vertex, which input candidates are still candidates (``alive``,
    ``sizes``, bumped ``version`` on change), and per canonical arc its candidate edges as positions."""

    def __init__(self, backend: Backend, idx: DataIndex, query: Graph, candidates: Sequence[Any], lookup_bytes: int):
        xp = self.xp = backend.xp
        self.backend, self.idx, self.query = backend, idx, query
        self.initial = list(candidates)
        self.sizes = [int(c.shape[0]) for c in self.initial]
        self.before = sum(self.sizes)
        self.maps_bytes = 4 * idx.n * len(self.initial)
        self.alive = [xp.ones(size, dtype=bool) for size in self.sizes]
        # Candidates uploaded or filtered on a device come with their bitsets.
        rows = candidates.rows if isinstance(candidates, CandidateSets) else None
        self.bits = [backend.bitset(idx, c) if rows is None else rows[u] for u, c in enumerate(self.initial)]
        self.first_maps = None
        if self.maps_bytes <= min(POSITION_BYTES, lookup_bytes):
            self.first_maps = [position_map(idx.n, c) for c in self.initial]
        # Where every input candidate of a query vertex has one vertex label (the filter's always do), its arcs read
        # only the neighbours with that label.
        self.runs = labelled_runs(backend, idx)
        self.label_of: list[int | None] = [None] * len(self.initial)
        if self.runs is not None:
            for u, c in enumerate(self.initial):
                if c.shape[0]:
                    found = idx.vertex_labels[c]
                    low, high = int(xp.min(found)), int(xp.max(found))
                    self.label_of[u] = low if low == high else None
        self.edges: dict[tuple[int, int, int], tuple[int, int, Any, Any]] = {}
        # An arc's edges are current while neither end's candidates changed since they were last filtered.
        self.version = [0] * len(self.initial)
        self.current: dict[tuple[int, int, int], tuple[int, int]] = {}
        self.canonical = [a for a in query_arcs(query) if a <= self.reverse(a)]

    def reverse(self, arc: tuple[int, int, int]) -> tuple[int, int, int]:
        u, w, e = arc
        return (w, u, e ^ 1 if self.query.directed else e)

    def bounds(self, arc: tuple[int, int, int]) -> tuple[Any, Any, Any, Any, int]:
        """Current candidates of the arc's source (positions), their runs' bounds in the returned neighbour array
        and the entries in all."""
        xp, idx = self.xp, self.idx
        a, b, label = arc
        at = xp.flatnonzero(self.alive[a])
        target = self.label_of[b]
        if self.runs is not None and target is not None:
            s, t = self.runs.bounds(xp, idx, self.initial[a][at], label, target)
            nbr = self.runs.nbr
        else:
            s, t = self.backend.run_bounds(idx, self.initial[a][at], label)
            nbr = idx.nbr
        return at, s, t, nbr, int(xp.sum(t - s)) if s.shape[0] else 0

    def scan(self, arc: tuple[int, int, int]) -> tuple[int, int, Any, Any]:
        """``(a, b, pa, pb)``: the arc's candidate edges read along ``a -> b`` (the arc or its reverse, whichever
        reads fewer entries) as positions in ``a``'s and ``b``'s input candidates, sorted by ``pa`` then ``pb``."""
        xp = self.xp
        side = self.bounds(arc)
        other = self.bounds(self.reverse(arc))
        if other[4] < side[4]:
            arc, side = self.reverse(arc), other
        a, b, _ = arc
        at, s, t, nbr, _ = side
        row, x = self.backend.gather_runs(nbr, s, t - s)
        # Entries that are no input candidate of b (most of them where runs of every label are read) are dropped by
        # a bitset test before positions are looked up; the survivors are gathered by index, not compacted by mask.
        hit = xp.flatnonzero(member(xp, self.bits[b], x))
        row, x = row[hit], x[hit]
        pb = xp.searchsorted(self.initial[b], x) if self.first_maps is None else self.first_maps[b][x]
        keep = self.alive[b][pb]
        return a, b, at[row[keep]], pb[keep]

    def filtered(self, arc: tuple[int, int, int]) -> tuple[int, int, Any, Any]:
        u, w, _ = arc
        a, b, pa, pb = self.edges[arc]
        if self.current[arc] != (self.version[u], self.version[w]):
            keep = self.alive[a][pa] & self.alive[b][pb]
            pa, pb = pa[keep], pb[keep]
        return a, b, pa, pb

    def refine(self, passes: int) -> int:
        """Up to ``passes`` passes over the canonical arcs, until one changes nothing; returns the passes made."""
        xp, alive, sizes, version = self.xp, self.alive, self.sizes, self.version
        done = 0
        for _ in range(passes):
            done += 1
            changed = False
            for arc in self.canonical:
                u, w, _ = arc
                if arc not in self.edges:
                    self.edges[arc] = self.scan(arc)
                elif self.current[arc] == (version[u], version[w]):
                    continue
                else:
                    self.edges[arc] = self.filtered(arc)
                a, b, pa, pb = self.edges[arc]
                for t, p in ((a, pa), (b, pb)):
                    supported = xp.zeros(int(alive[t].shape[0]), dtype=bool)
                    supported[p] = True
                    kept = count_true(supported)
                    if kept < sizes[t]:
                        alive[t], sizes[t] = supported, kept
                        version[t] += 1
                        changed = True
                self.current[arc] = (version[u], version[w])
            if not changed:
                break
        return done

    def index(self, passes: int, lookup_bytes: int) -> CandidateEdges:
        """The refined candidates and every arc's :class:`ArcIndex` over them (``passes``: refinement passes)."""
        xp, idx, sizes, initial = self.xp, self.idx, self.sizes, self.initial
        # Each input candidate's position in the refined candidates (-1 where removed).
        renumber = [xp.where(m, xp.cumsum(m) - 1, -1).astype(xp.int32) for m in self.alive]
        cands = [c if size == int(c.shape[0]) else c[m] for c, m, size in zip(initial, self.alive, sizes)]
        positions = None if self.first_maps is None else [
            m if size == int(i.shape[0]) else position_map(idx.n, c)
            for m, i, c, size in zip(self.first_maps, initial, cands, sizes)]
        matrices = self._matrix_arcs(sizes, lookup_bytes) if positions is not None else set()
        index = {}
        for arc in self.canonical:
            a, b, pa, pb = self.filtered(arc)
            ra, rb = renumber[a][pa], renumber[b][pb]
            order = stable_order(pb, int(initial[b].shape[0]))
            # Read along a -> b, the edges are sorted for that arc; the reverse arc takes them sorted by b, stably.
            along = ((a, b, ra, rb, initial[b][pb]), (b, a, rb[order], ra[order], initial[a][pa][order]))
            for key in (arc, self.reverse(arc)):
                src, dst, rows, cols, values = along[0] if key[0] == a else along[1]
                index[key] = arc_index(xp, idx.n, key, sizes[src], rows, values,
                                       cols if key in matrices else None, sizes[dst])
        return CandidateEdges(cands, index, passes, self.before - sum(sizes), idx.n, positions)

    def _matrix_arcs(self, sizes: list[int], lookup_bytes: int) -> set[tuple[int, int, int]]:
        """The arcs that get a bit matrix (``sizes``: the refined candidates'), smallest first within
        :data:`MATRIX_BYTES` and what the position maps leave of ``lookup_bytes``.  A probe costs one lookup with a
        matrix and a binary search without, whatever the matrix's size, so small ones serve the most probes per
        byte: in canonical order, the small-batch query s188 (R-MAT 2^18) spent its 64 MiB on two 28 MB matrices,
        and its trailing count's 31M probes of a 2.5 MB one went by binary search (0.5 of its 0.97 s on NumPy)."""
        left = min(MATRIX_BYTES, lookup_bytes - self.maps_bytes)
        need = {key: 4 * ((sizes[key[0]] * sizes[key[1]] + 31) // 32)
                for arc in self.canonical for key in (arc, self.reverse(arc))}
        chosen = set()
        for key in sorted(need, key=need.__getitem__):
            if 0 < need[key] <= left:
                chosen.add(key)
                left -= need[key]
        return chosen




def arc_index(xp: Any, n: int, arc: tuple[int, int, int], size: int, rows: Any, values: Any,
              matrix_cols: Any = None, width: int = 0) -> ArcIndex:
    """The :class:`ArcIndex` of ``arc`` from its candidate edges, sorted by row then value: ``rows`` are the
    sources' positions in their ``size`` candidates, ``values`` the targets.  ``matrix_cols`` (the targets'
    positions in their ``width`` candidates), when given, adds the bit matrix."""
    offsets = xp.zeros(size + 1, dtype=xp.int64)
    offsets[1:] = xp.cumsum(bincount(rows, size))
    rows = rows.astype(xp.int64)
    matrix = None
    if matrix_cols is not None:
        # Edges are distinct, so their bits are.
        matrix = bit_words(xp, rows * width + matrix_cols.astype(xp.int64), size * width)
    return ArcIndex(*arc, offsets, values.astype(xp.int32), rows * n + values, matrix)
