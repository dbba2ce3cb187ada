"""Candidate refinement (GraphQL/CECI-style arc consistency) and the candidate-edge index built over its result.

``v`` stays a candidate of ``u`` only while every query arc ``u -> w`` has at least one candidate edge from ``v``
(see :mod:`distsm.kernels.candidate_edges`).  A pass tests every query arc against the candidates the pass started
with, and a candidate survives it when each arc at its query vertex supports it; passes repeat until one changes
nothing or the pass budget is spent.  Every candidate removed is one that can take part in no match, so counts are
unchanged, and the fixed point is the one arc-consistent candidate set a pass order would reach.

All query arcs are processed together, as one set of arrays, instead of one arc at a time: a query of 24 vertices
and 50 edges made some 2,000 small array operations an arc at a time, and their fixed costs were most of its
refinement.  The data adjacency is read once per query edge, from the end with fewer entries to read and, on graphs
with several vertex labels, only among the neighbours with the other end's label (:class:`LabelledRuns`); the
passes then only filter the candidate edges found, so they cost the candidate edges, not the adjacency.

Candidates are numbered by their *slot*: vertex ``u``'s input candidates are slots ``base[u] .. base[u + 1] - 1``,
in order; the candidate edges of canonical arc ``i`` (read along ``a -> b``, one of its two directions) are
``(arc, slot of the a end, slot of the b end)``, sorted by arc, then the a end, then the b end.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from distsm.graph import Graph
from distsm.kernels.array_ops import bincount, chunk_ranges, count_true, stable_order
from distsm.kernels.backend import Backend
from distsm.kernels.candidate_edges import (COUNT_CHUNK_ENTRIES, MATRIX_BYTES, POSITION_BYTES, ArcIndex,
                                            CandidateEdges, labelled_runs, position_map, query_arcs)
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex
from distsm.kernels.vertex_sets import MASK_VERTICES, bit_words

#: Refinement passes at most (each pass visits every query edge once; the first reads the data adjacency, the
#: others only filter the candidate edges found then, so a pass costs little next to the first).
REFINE_PASSES = 8
#: The first pass reads the adjacency of this many arcs at once: a few array operations per group instead of per
#: arc, while each group still reads among the candidates the groups before it left (on gMatch's suite groups of 8
#: read 0-48% more entries than an arc at a time; 4 and 16 built the generated suites' indexes no faster).
SCAN_GROUP = 8

Arc = tuple[int, int, int]


def build(backend: Backend, idx: DataIndex, query: Graph, candidates: Sequence[Any], *,
          passes: int = REFINE_PASSES, lookup_bytes: int = POSITION_BYTES + MATRIX_BYTES,
          chunk_entries: int = COUNT_CHUNK_ENTRIES) -> CandidateEdges:
    """Refine ``candidates`` (sorted; up to ``passes`` passes) and build every arc's candidate edges over the
    result, reading the adjacency ``chunk_entries`` entries at a time.

    Position maps and arc bit matrices take at most ``lookup_bytes`` (and :data:`POSITION_BYTES` and
    :data:`MATRIX_BYTES`); lookups they cannot serve are binary searches.  An arc and its reverse hold the same
    data edges (the reverse one with effective label ``e ^ 1`` on directed graphs): the edges read along one are
    already sorted for it, and the other takes them by one stable sort."""
    refinement = Refinement(backend, idx, query, candidates, lookup_bytes)
    done = refinement.refine(passes, chunk_entries)
    return refinement.index(done, lookup_bytes, chunk_entries)


class Refinement:
    """The state of one :func:`build`: the input candidates laid end to end (``flat``, slot numbers), which are
    still candidates (``alive``), and the canonical arcs' candidate edges over them."""

    def __init__(self, backend: Backend, idx: DataIndex, query: Graph, candidates: Sequence[Any],
                 lookup_bytes: int):
        xp = self.xp = backend.xp
        self.backend, self.idx, self.query = backend, idx, query
        self.initial = list(candidates)
        self.sizes = [int(c.shape[0]) for c in self.initial]
        self.base = list(itertools.accumulate(self.sizes, initial=0))
        self.before = self.base[-1]
        packed = candidates if isinstance(candidates, CandidateSets) else None
        self.flat = packed.values if packed is not None else xp.concatenate(self.initial) if self.initial else \
            xp.zeros(0, dtype=xp.int64)
        # Each slot's query vertex, and its rank among that vertex's candidates.
        self.owner = xp.repeat(xp.arange(len(self.sizes), dtype=xp.int64), self.sizes)
        self.rank = xp.arange(self.before, dtype=xp.int64) - xp.asarray(self.base[:-1], dtype=xp.int64)[self.owner]
        self.alive = xp.ones(self.before, dtype=bool)
        # Candidates uploaded or filtered on a device come with their membership rows.
        self.bits = packed.rows if packed is not None and packed.rows is not None else self._membership()
        self.maps_bytes = 4 * idx.n * len(self.initial)
        self.maps, self.keys = None, None
        if self.maps_bytes <= min(POSITION_BYTES, lookup_bytes):
            self.maps = xp.full((len(self.initial), idx.n), -1, dtype=xp.int32)
            self.maps.ravel()[self.owner * idx.n + self.flat] = self.rank.astype(xp.int32)
        else:
            self.keys = self.owner * idx.n + self.flat  # sorted: vertex by vertex, each vertex's sorted
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
        self.canonical = [a for a in query_arcs(query) if a <= self.reverse(a)]
        # Per canonical arc, the direction its edges were read along, and (arc, a slot, b slot) per candidate edge.
        self.along: list[Arc] = list(self.canonical)
        z = xp.zeros(0, dtype=xp.int64)
        self.edges: tuple[Any, Any, Any] = (z, z, z)

    def _membership(self) -> Any:
        """Row ``u``: vertex ``u``'s input candidates as a membership set over the data vertices (a bool mask on
        graphs of at most :data:`MASK_VERTICES` vertices, else ``uint32`` words), as the backends' bitsets are."""
        xp, n, q = self.xp, self.idx.n, len(self.sizes)
        if n <= MASK_VERTICES:
            bits = xp.zeros((q, n), dtype=bool)
            bits.ravel()[self.owner * n + self.flat] = True
            return bits
        width = (n + 31) // 32
        return bit_words(xp, self.owner * (32 * width) + self.flat, 32 * width * q).reshape(q, width)

    def reverse(self, arc: Arc) -> Arc:
        u, w, e = arc
        return (w, u, e ^ 1 if self.query.directed else e)

    def _bounds(self, directions: list[Arc], of: Any, sources: Any) -> tuple[Any, Any, Any]:
        """Start and end of each source's run in the returned neighbour array: ``sources`` (data vertices) laid
        end to end direction by direction, ``of[j]`` the direction of source ``j``."""
        xp, idx, runs = self.xp, self.idx, self.runs
        if runs is not None and all(self.label_of[b] is not None for _, b, _ in directions):
            # A label the data graph never uses has empty runs (and its keys would collide with others').
            shift = xp.asarray([lab * runs.labels + self.label_of[b] if 0 <= lab < idx.num_labels else -1  # type: ignore[operator]
                                for _, b, lab in directions], dtype=xp.int64)[of]
            key = sources.astype(xp.int64) * (idx.num_labels * runs.labels) + xp.maximum(shift, 0)
            s = runs.offsets[key]
            return s, xp.where(shift >= 0, runs.offsets[key + 1], s), runs.nbr
        parts = [self.backend.run_bounds(idx, sources[of == k], lab) for k, (_, _, lab) in enumerate(directions)]
        return xp.concatenate([s for s, _ in parts]), xp.concatenate([t for _, t in parts]), idx.nbr

    def scan(self, group: list[int], chunk_entries: int) -> list[tuple[Any, Any]]:
        """The candidate edges of the canonical arcs ``group`` (indexes into :attr:`canonical`) among the current
        candidates, each read along the direction that reads fewer adjacency entries (recorded in :attr:`along`),
        ``chunk_entries`` entries at a time: per arc, the edges as positions in its ends' input candidates, sorted
        by the first end, then the second."""
        xp = self.xp
        directions = [d for i in group for d in (self.canonical[i], self.reverse(self.canonical[i]))]
        at = {a: xp.flatnonzero(self.alive[self.base[a]:self.base[a + 1]]) for a, _, _ in directions}
        counts = [int(at[a].shape[0]) for a, _, _ in directions]
        none = xp.zeros(0, dtype=xp.int64)
        if not sum(counts):
            for i in group:
                self.along[i] = self.canonical[i]
            return [(none, none) for _ in group]
        of = xp.repeat(xp.arange(len(directions), dtype=xp.int64), counts)
        position = xp.concatenate([at[a] for a, _, _ in directions])
        s, t, nbr = self._bounds(directions, of, xp.concatenate([self.initial[a][at[a]] for a, _, _ in directions]))
        lengths = t - s
        ends = xp.asarray(list(itertools.accumulate(counts, initial=0)), dtype=xp.int64)
        read = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(lengths)])[ends]
        entries = [int(x) for x in (read[1:] - read[:-1]).tolist()]
        # Fewer entries read along the arc's reverse: read that way (ties read along the arc).
        flipped = [entries[2 * k + 1] < entries[2 * k] for k in range(len(group))]
        for i, flip in zip(group, flipped):
            self.along[i] = self.reverse(self.canonical[i]) if flip else self.canonical[i]
        keep = xp.flatnonzero(xp.asarray([flipped[k // 2] == bool(k % 2) for k in range(len(directions))])[of])
        of, s, lengths, position = of[keep], s[keep], lengths[keep], position[keep]
        target = xp.asarray([b for _, b, _ in directions], dtype=xp.int64)
        found: list[tuple[Any, Any, Any]] = []
        for lo, hi in chunk_ranges(xp, lengths, chunk_entries):
            row, x = self.backend.gather_runs(nbr, s[lo:hi], lengths[lo:hi])
            direction = of[lo:hi][row]
            b = target[direction]
            # Entries that are no input candidate of b (most of them where runs of every label are read) are
            # dropped by a membership test before slots are looked up, and then those no longer candidates.
            hit = xp.flatnonzero(self._member(b, x))
            row, x, b, direction = row[hit], x[hit], b[hit], direction[hit]
            slot = self._slot(b, x)
            live = xp.flatnonzero(self.alive[slot])
            found.append((direction[live] // 2, position[lo:hi][row[live]],
                          slot[live] - xp.asarray(self.base[:-1], dtype=xp.int64)[b[live]]))
        arc = xp.concatenate([f[0] for f in found]) if found else none
        pa = xp.concatenate([f[1] for f in found]) if found else none
        pb = xp.concatenate([f[2] for f in found]) if found else none
        bounds = list(itertools.accumulate(bincount(arc, len(group)).tolist(), initial=0))
        return [(pa[lo:hi], pb[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]

    def _member(self, b: Any, x: Any) -> Any:
        """Mask: data vertex ``x[i]`` is an input candidate of query vertex ``b[i]``."""
        xp, bits = self.xp, self.bits
        if bits.dtype == bool:
            return bits.ravel()[b * bits.shape[1] + x]
        word = bits.ravel()[b * bits.shape[1] + (x >> 5)]
        return ((word >> (x & 31).astype(xp.uint32)) & xp.uint32(1)).astype(bool)

    def _slot(self, b: Any, x: Any) -> Any:
        """The slots of the data vertices ``x``, each an input candidate of query vertex ``b[i]``."""
        xp = self.xp
        if self.maps is not None:
            return self.maps.ravel()[b * self.idx.n + x].astype(xp.int64) + xp.asarray(self.base[:-1])[b]
        return xp.searchsorted(self.keys, b * self.idx.n + x)

    def refine(self, passes: int, chunk_entries: int = COUNT_CHUNK_ENTRIES) -> int:
        """Up to ``passes`` passes over the canonical arcs, each arc in turn, until a pass changes nothing; returns
        the passes made.  An arc's edges are filtered when either end's candidates changed since it was last visited
        (so the first pass sees exactly the edges among the candidates that the arcs before it left, as reading the
        adjacency then would), and its ends keep the candidates those edges support.  The first pass reads the
        adjacency :data:`SCAN_GROUP` arcs at a time, each group among the candidates the groups before it left."""
        arcs = len(self.canonical)
        local: list[tuple[Any, Any]] = [(None, None)] * arcs
        self.alive_views = [self.alive[lo:hi] for lo, hi in zip(self.base, self.base[1:])]  # writes reach alive
        self.live = list(self.sizes)
        self.version = [0] * len(self.sizes)
        current = [(0, 0)] * arcs
        done, changed = 0, True
        while done < passes and changed:
            done += 1
            changed = False
            step = SCAN_GROUP if done == 1 else max(arcs, 1)
            for first in range(0, arcs, step):
                group = list(range(first, min(first + step, arcs)))
                if done == 1:
                    for i, edges in zip(group, self.scan(group, chunk_entries)):
                        a, b, _ = self.along[i]
                        local[i], current[i] = edges, (self.version[a], self.version[b])
                for i in group:
                    a, b, _ = self.along[i]
                    if current[i] != (self.version[a], self.version[b]):
                        local[i] = self._filtered(a, b, local[i])
                    elif done > 1:
                        continue
                    changed |= self._support(a, local[i][0]) | self._support(b, local[i][1])
                    current[i] = (self.version[a], self.version[b])
        local = [edges if current[i] == (self.version[a], self.version[b]) else self._filtered(a, b, edges)
                 for i, (edges, (a, b, _)) in enumerate(zip(local, self.along))]
        xp = self.xp
        if local:
            self.edges = (xp.repeat(xp.arange(arcs, dtype=xp.int64), [int(pa.shape[0]) for pa, _ in local]),
                          xp.concatenate([pa + self.base[a] for (pa, _), (a, _, _) in zip(local, self.along)]),
                          xp.concatenate([pb + self.base[b] for (_, pb), (_, b, _) in zip(local, self.along)]))
        return done

    def _filtered(self, a: int, b: int, edges: tuple[Any, Any]) -> tuple[Any, Any]:
        """``edges`` (positions in ``a``'s and ``b``'s input candidates) between current candidates only."""
        pa, pb = edges
        keep = self.alive_views[a][pa] & self.alive_views[b][pb]
        return pa[keep], pb[keep]

    def _support(self, t: int, positions: Any) -> bool:
        """Keep only the candidates of query vertex ``t`` at ``positions`` (an arc's edges' ends there); whether
        that removed any."""
        supported = self.xp.zeros(self.sizes[t], dtype=bool)
        supported[positions] = True
        kept = count_true(supported)
        if kept == self.live[t]:
            return False
        self.alive_views[t][...] = supported
        self.live[t] = kept
        self.version[t] += 1
        return True

    def index(self, passes: int, lookup_bytes: int, chunk_entries: int = COUNT_CHUNK_ENTRIES) -> CandidateEdges:
        """The refined candidates and every arc's :class:`ArcIndex` over them (``passes``: refinement passes)."""
        xp, idx, alive = self.xp, self.idx, self.alive
        total = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(alive, dtype=xp.int64)])
        before = total[xp.asarray(self.base, dtype=xp.int64)]
        sizes = [int(x) for x in (before[1:] - before[:-1]).tolist()]
        # Each slot's position among its vertex's refined candidates (meaningful where alive).
        renumber = (total[1:] - 1 - before[:-1][self.owner]).astype(xp.int32)
        refined = self.flat[alive]
        at = list(itertools.accumulate(sizes, initial=0))
        cands = [c if size == s else refined[at[u]:at[u + 1]]
                 for u, (c, size, s) in enumerate(zip(self.initial, sizes, self.sizes))]
        positions = None if self.maps is None else [
            self.maps[u] if size == s else position_map(idx.n, c)
            for u, (c, size, s) in enumerate(zip(cands, sizes, self.sizes))]
        matrices = _matrix_arcs(self, sizes, lookup_bytes) if positions is not None else set()
        arc, sa, sb = self.edges
        per_arc = [int(x) for x in bincount(arc, len(self.canonical)).tolist()] if self.canonical else []
        bounds = list(itertools.accumulate(per_arc, initial=0))
        index = {}
        # Arcs go in groups of about chunk_entries edges: the temporaries of a group's arrays stay within the scan's.
        for lo, hi in _groups(per_arc, chunk_entries):
            a, b = bounds[lo], bounds[hi]
            along, at = self.along[lo:hi], [x - a for x in bounds[lo:hi + 1]]
            ra, rb = renumber[sa[a:b]], renumber[sb[a:b]]
            # Read along a -> b, the edges are sorted for that direction; the reverse takes them sorted by (arc, b).
            index.update(_arc_indexes(xp, idx.n, along, sizes, at, (ra, rb, self.flat[sb[a:b]]), matrices))
            width = max(sizes) + 1
            order = stable_order((arc[a:b] - lo).astype(xp.int64) * width + rb, (hi - lo) * width)
            index.update(_arc_indexes(xp, idx.n, [self.reverse(x) for x in along], sizes, at,
                                      (rb[order], ra[order], self.flat[sa[a:b]][order]), matrices))
        index = {key: index[key] for arc_ in self.canonical for key in (arc_, self.reverse(arc_))}
        return CandidateEdges(cands, index, passes, self.before - sum(sizes), idx.n, positions)


def _groups(counts: list[int], cap: int) -> list[tuple[int, int]]:
    """Ranges ``[lo, hi)`` of ``counts``, in order, each the most items from ``lo`` on whose counts sum to at most
    ``cap`` (and at least one item)."""
    out, lo, held = [], 0, 0
    for i, c in enumerate(counts):
        if i > lo and held + c > cap:
            out.append((lo, i))
            lo, held = i, 0
        held += c
    if lo < len(counts):
        out.append((lo, len(counts)))
    return out


def _arc_indexes(xp: Any, n: int, keys: list[Arc], sizes: list[int], bounds: list[int], edges: tuple[Any, Any, Any],
                 matrices: set[Arc]) -> dict[Arc, ArcIndex]:
    """The :class:`ArcIndex` of each arc ``keys[i]``, whose edges are entries ``bounds[i]:bounds[i + 1]`` of
    ``edges = (rows, cols, values)``: positions among the source's refined candidates, the target's, and the target
    data vertices, sorted by row then value.  The arrays of all arcs are made together and sliced."""
    rows, cols, values = edges
    first = list(itertools.accumulate((sizes[u] for u, _, _ in keys), initial=0))
    arc_of = xp.repeat(xp.arange(len(keys), dtype=xp.int64), [b - a for a, b in zip(bounds, bounds[1:])])
    rows64 = rows.astype(xp.int64)
    counted = xp.concatenate([xp.zeros(1, dtype=xp.int64),
                              xp.cumsum(bincount(rows64 + xp.asarray(first[:-1], dtype=xp.int64)[arc_of], first[-1]))])
    all_keys = rows64 * n + values
    all_values = values.astype(xp.int32)
    # Matrices of several arcs share one bitset, each arc's words from a word boundary.
    words = [(sizes[key[0]] * sizes[key[1]] + 31) // 32 if key in matrices else 0 for key in keys]
    word_at = list(itertools.accumulate(words, initial=0))
    bitset = None
    if word_at[-1]:
        wanted = xp.asarray([k in matrices for k in keys])[arc_of]
        width = xp.asarray([sizes[w] for _, w, _ in keys], dtype=xp.int64)[arc_of]
        bit = xp.asarray(word_at[:-1], dtype=xp.int64)[arc_of] * 32 + rows64 * width + cols.astype(xp.int64)
        bitset = bit_words(xp, bit[wanted], 32 * word_at[-1])
    out = {}
    for i, key in enumerate(keys):
        a, b = bounds[i], bounds[i + 1]
        offsets = counted[first[i]:first[i + 1] + 1] - a
        matrix = None if bitset is None or key not in matrices else bitset[word_at[i]:word_at[i + 1]]
        out[key] = ArcIndex(*key, offsets, all_values[a:b], all_keys[a:b], matrix)
    return out


def _matrix_arcs(refinement: Refinement, sizes: list[int], lookup_bytes: int) -> set[Arc]:
    """The arcs that get a bit matrix (``sizes``: the refined candidates'), smallest first within
    :data:`MATRIX_BYTES` and what the position maps leave of ``lookup_bytes``.  A probe costs one lookup with a
    matrix and a binary search without, whatever the matrix's size, so small ones serve the most probes per
    byte: in canonical order, the small-batch query s188 (R-MAT 2^18) spent its 64 MiB on two 28 MB matrices,
    and its trailing count's 31M probes of a 2.5 MB one went by binary search (0.5 of its 0.97 s on NumPy)."""
    left = min(MATRIX_BYTES, lookup_bytes - refinement.maps_bytes)
    need = {key: 4 * ((sizes[key[0]] * sizes[key[1]] + 31) // 32)
            for arc in refinement.canonical for key in (arc, refinement.reverse(arc))}
    chosen = set()
    for key in sorted(need, key=need.__getitem__):
        if 0 < need[key] <= left:
            chosen.add(key)
            left -= need[key]
    return chosen
