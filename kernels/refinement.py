"""Candidate refinement (GraphQL/CECI-style arc consistency) and the candidate-edge index built over its result.

``v`` stays a candidate of ``u`` only while every query arc ``u -> w`` has at least one candidate edge from ``v``
(see :mod:`distsm.kernels.candidate_edges`).  Passes repeat until nothing changes or the pass budget is spent; every
candidate removed is one that can take part in no match, so counts are unchanged.  The data adjacency is read once
per query edge, from the end with fewer entries to read and, on graphs with several vertex labels, only among the
neighbours with the other end's label (:class:`~distsm.kernels.candidate_edges.LabelledRuns`); later passes filter
the candidate edges found then.
"""

from __future__ import annotations

import itertools
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

#: Bytes one candidate edge may occupy while its group of arcs' indexes is built (positions, arc numbers, the
#: reverse order, rows, keys and bit numbers of both directions), past what the index keeps.
GROUP_EDGE_BYTES = 128


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
    order are already sorted for the arc they were read along (the reverse arcs take one stable sort of a group of
    arcs' edges, :class:`_Edges`)."""
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
        """The refined candidates (``passes``: refinement passes) and every arc's :class:`ArcIndex` over them, built
        for groups of arcs at once (:meth:`groups`; each arc's arrays are views of arrays its group shares: arc by
        arc, a 32-vertex query's hundred arcs took a third of its refinement in small array operations)."""
        xp, idx, sizes, initial = self.xp, self.idx, self.sizes, self.initial
        cands = [c if size == int(c.shape[0]) else c[m] for c, m, size in zip(initial, self.alive, sizes)]
        positions = None if self.first_maps is None else [
            m if size == int(i.shape[0]) else position_map(idx.n, c)
            for m, i, c, size in zip(self.first_maps, initial, cands, sizes)]
        matrices = self._matrix_arcs(sizes, lookup_bytes) if positions is not None else set()
        width = [int(c.shape[0]) for c in initial]
        ids = _joined(xp, initial)
        # Each input candidate's position among its vertex's refined candidates (read only where still one).
        before = xp.asarray([0, *itertools.accumulate(sizes)][:-1], dtype=xp.int64)
        renumber = (xp.cumsum(_joined(xp, self.alive)) - 1 - xp.repeat(before, width)).astype(xp.int32)
        index = {}
        for group in self.groups(max(lookup_bytes // GROUP_EDGE_BYTES, 1)):
            # An arc's unfiltered edges go as its group is built: they would otherwise stay beside its index.
            edges = _Edges(xp, group, {arc: self.filtered(arc) for arc in group}, width)
            for arc in group:
                del self.edges[arc]
            # Read along a -> b, an arc's edges are sorted for that arc; its reverse takes them in by_b's order.
            keys = [arc if arc[0] == a else self.reverse(arc) for arc, (a, _) in zip(group, edges.ends)]
            back = [self.reverse(key) for key in keys]
            ra, rb, order = renumber[edges.ga], renumber[edges.gb], edges.by_b
            along = _Direction(xp, idx.n, edges, edges.ends, (ra, rb, ids[edges.gb]), sizes,
                               [key in matrices for key in keys])
            against = _Direction(xp, idx.n, edges, [(b, a) for a, b in edges.ends],
                                 (rb[order], ra[order], ids[edges.ga][order]), sizes, [key in matrices for key in back])
            for k, (key, rev) in enumerate(zip(keys, back)):
                index[key], index[rev] = along.arc_index(k, key), against.arc_index(k, rev)
        return CandidateEdges(cands, index, passes, self.before - sum(sizes), idx.n, positions)

    def groups(self, most: int) -> list[list[tuple[int, int, int]]]:
        """The canonical arcs in runs of at most ``most`` candidate edges (an arc with more alone), so that a group's
        temporaries (:data:`GROUP_EDGE_BYTES` an edge) stay within the lookups' share of the budget."""
        out: list[list[tuple[int, int, int]]] = []
        held = 0
        for arc in self.canonical:
            edges = int(self.edges[arc][2].shape[0])
            if not out or held + edges > most:
                out.append([])
                held = 0
            out[-1].append(arc)
            held += edges
        return out

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


class _Edges:
    """A group of canonical arcs' candidate edges at once, as positions in one array of every query vertex's input
    candidates (vertex ``u``'s from ``off[u]``): ``ga`` and ``gb`` the ends of each edge (``ends[k]`` the query
    vertices of arc ``k``, ``counts[k]`` its edges), ``arc`` its arc's number, arcs in canonical order and each
    sorted by ``ga`` then ``gb``; ``by_b`` orders them by arc, then ``gb``, as the reverse arcs take them."""

    def __init__(self, xp: Any, canonical: Sequence[tuple[int, int, int]],
                 found: dict[tuple[int, int, int], tuple[int, int, Any, Any]], width: Sequence[int]):
        self.off = [0, *itertools.accumulate(width)]
        self.ends = [found[arc][:2] for arc in canonical]
        self.counts = [int(found[arc][2].shape[0]) for arc in canonical]
        self.ga = _joined(xp, [found[arc][2].astype(xp.int64) + self.off[found[arc][0]] for arc in canonical])
        self.gb = _joined(xp, [found[arc][3].astype(xp.int64) + self.off[found[arc][1]] for arc in canonical])
        self.arc = xp.repeat(xp.arange(len(canonical), dtype=xp.int64), self.counts)
        total = max(self.off[-1], 1)
        self.by_b = stable_order(self.arc * total + self.gb, max(len(canonical), 1) * total)


class _Direction:
    """Every arc's :class:`ArcIndex` read one way (``ends[k]``: source and target of arc ``k``), from its edges
    (``read``: their ``rows``, positions among the source's refined candidates, ``cols``, the target's, and
    ``values``, data vertices, in ``edges``' order, each arc's sorted by row, then value); ``sizes`` the refined
    candidates per query vertex, ``with_matrix[k]`` whether arc ``k`` gets a bit matrix."""

    def __init__(self, xp: Any, n: int, edges: _Edges, ends: list[tuple[int, int]], read: tuple[Any, Any, Any],
                 sizes: list[int], with_matrix: list[bool]):
        rows, cols, values = read
        arc = edges.arc
        self.edge_at = [0, *itertools.accumulate(edges.counts)]
        lengths = [sizes[src] + 1 for src, _ in ends]
        self.row_at = [0, *itertools.accumulate(lengths)]
        # One offsets array for every arc: each arc's row counts after its own leading zero, summed through, less the
        # edges of the arcs before it.
        rows = rows.astype(xp.int64)
        counted = bincount(xp.asarray(self.row_at[:-1], dtype=xp.int64)[arc] + 1 + rows, self.row_at[-1])
        self.offsets = xp.cumsum(counted) - xp.repeat(xp.asarray(self.edge_at[:-1], dtype=xp.int64), lengths)
        self.values = values.astype(xp.int32)
        self.keys = rows * n + values
        words = [(sizes[src] * sizes[dst] + 31) // 32 if chosen else 0 for (src, dst), chosen in zip(ends, with_matrix)]
        self.word_at = [0, *itertools.accumulate(words)]
        self.matrix: Any = None
        if self.word_at[-1]:
            picked = xp.asarray(with_matrix)[arc]
            width = xp.asarray([sizes[dst] for _, dst in ends], dtype=xp.int64)[arc]
            base = xp.asarray(self.word_at[:-1], dtype=xp.int64)[arc] * 32
            # Edges are distinct and each arc has words of its own, so their bits are distinct.
            bits = (base + rows * width + cols.astype(xp.int64))[picked]
            self.matrix = bit_words(xp, bits, 32 * self.word_at[-1])

    def arc_index(self, k: int, key: tuple[int, int, int]) -> ArcIndex:
        e0, e1 = self.edge_at[k], self.edge_at[k + 1]
        w0, w1 = self.word_at[k], self.word_at[k + 1]
        return ArcIndex(*key, self.offsets[self.row_at[k]:self.row_at[k + 1]], self.values[e0:e1], self.keys[e0:e1],
                        None if w1 == w0 else self.matrix[w0:w1])


def _joined(xp: Any, arrays: list[Any]) -> Any:
    if not arrays:
        return xp.zeros(0, dtype=xp.int64)
    return xp.concatenate(arrays) if len(arrays) > 1 else arrays[0]
