"""Candidate refinement and the candidate-edge index (EGSM's candidate edges, gMatch's candidate graph).

For a query arc ``u -> w`` with effective label ``e`` (as seen from ``u``), the *candidate edges* are the data
pairs ``(v, x)`` with ``v`` in ``C(u)``, ``x`` in ``N(v, e)`` and ``x`` in ``C(w)``.  They are stored per arc as a
CSR over the positions of ``C(u)``: ``values[offsets[i]:offsets[i + 1]]`` is the sorted run ``N(C(u)[i], e) ∩
C(w)``.  Joins that read these runs touch only vertices that can still match, not the whole data adjacency (with
16 vertex labels a sixteenth of it), and the run lengths give the cost model exact fan-outs.  A data vertex's
position in ``C(u)`` is read from a per-query-vertex map, and "is ``(v, x)`` a candidate edge?" from a per-arc bit
matrix over ``C(u) x C(w)``, where those fit their byte bounds; elsewhere both are binary searches (candidate
arrays and each arc's keys are sorted).

Refinement (GraphQL/CECI-style arc consistency): ``v`` stays a candidate of ``u`` only while every query arc
``u -> w`` has at least one candidate edge from ``v``.  Passes repeat until nothing changes or the pass budget is
spent; every candidate removed is one that can take part in no match, so counts are unchanged.  The data adjacency
is read once per query edge, from the end with fewer entries to read and, on graphs with several vertex labels,
only among the neighbours with the other end's label (:class:`LabelledRuns`); later passes filter the candidate
edges found then.

Everything is array-level code over the backend's ``xp`` (NumPy or CuPy), vectorised over candidate edges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import chunk_ranges
from distsm.kernels.vertex_sets import bit_words, member
from distsm.kernels.array_ops import bincount, count_true, stable_order
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex, entry_run_keys
from distsm import caches
from distsm.kernels.order import query_adjacency

#: Refinement passes at most (each pass visits every query edge once; the first reads the data adjacency, the
#: others only filter the candidate edges found then, so a pass costs little next to the first).
REFINE_PASSES = 8


#: Position maps (4 bytes per data vertex and query vertex) are built when they fit this many bytes in all, and arc
#: bit matrices (a bit per pair of candidates of the arc's ends) while they fit this many more: probes and position
#: lookups become array reads instead of binary searches.
POSITION_BYTES = 64 << 20
MATRIX_BYTES = 64 << 20


@dataclass(frozen=True)
class ArcIndex:
    """Candidate edges of one query arc ``u -> w`` (label ``label`` as seen from ``u``)."""

    u: int
    w: int
    label: int
    offsets: Any      # int64[|C(u)| + 1]
    values: Any       # int32[edges], runs sorted
    keys: Any         # int64[edges]: position in C(u) * n + value, globally sorted (membership by one search)
    #: uint32 words of a |C(u)| x |C(w)| bit matrix (bit ``i * |C(w)| + j``: an edge from the i-th candidate of u
    #: to the j-th of w): membership by one lookup; None where it would be too large (see MATRIX_BYTES)
    matrix: Any = None

    @property
    def edges(self) -> int:
        return int(self.values.shape[0])


@dataclass
class CandidateEdges:
    """Refined candidates of every query vertex and the candidate edges of every query arc.

    ``arcs[(u, w, label)]`` is the :class:`ArcIndex` of that arc; ``passes`` is how many refinement passes ran
    and ``removed`` how many candidates they removed.
    """

    candidates: list[Any]
    arcs: dict[tuple[int, int, int], ArcIndex]
    passes: int
    removed: int
    n: int                # data vertices (the keys' radix)
    #: per query vertex, int32[n]: each data vertex's position in its candidates, -1 if none (None: the maps
    #: would exceed POSITION_BYTES, and positions are found by binary search)
    positions: list[Any] | None = None

    def arc(self, u: int, w: int, label: int) -> ArcIndex:
        return self.arcs[(u, w, label)]

    def to(self, move: Callable[[Any], Any]) -> CandidateEdges:
        """The same index with every array passed through ``move`` (e.g. a backend's ``to_host``: refined on a GPU,
        planned on the host)."""
        return self.to_all(lambda arrays: [move(a) for a in arrays])

    def to_all(self, move_all: Callable[[list[Any]], list[Any]]) -> CandidateEdges:
        """The same index with its arrays moved together by ``move_all`` (a list in, the moved list out, e.g. a
        device backend's ``upload``: planned on the host, joined on a GPU, in one copy)."""
        arcs = list(self.arcs.items())
        arrays = [*self.candidates, *(x for _, a in arcs for x in (a.offsets, a.values, a.keys, a.matrix)
                                      if x is not None), *(self.positions or [])]
        moved = iter(move_all(arrays))
        candidates = [next(moved) for _ in self.candidates]
        index = {k: ArcIndex(a.u, a.w, a.label, next(moved), next(moved), next(moved),
                             None if a.matrix is None else next(moved)) for k, a in arcs}
        positions = None if self.positions is None else [next(moved) for _ in self.positions]
        return CandidateEdges(candidates, index, self.passes, self.removed, self.n,
                              positions)

    def without_lookups(self) -> tuple[CandidateEdges, tuple[tuple[int, int, int], ...]]:
        """This index without its lookups (position maps and bit matrices) and the arcs that had a matrix: the
        index to ship to another process, which rebuilds them (:meth:`with_lookups`).  Lookups are most of its
        bytes: 69 of 97 MB for a dense 6-vertex query on an R-MAT graph of 2^18 vertices."""
        arcs = {k: ArcIndex(a.u, a.w, a.label, a.offsets, a.values, a.keys) for k, a in self.arcs.items()}
        return (CandidateEdges(self.candidates, arcs, self.passes, self.removed, self.n),
                tuple(k for k, a in self.arcs.items() if a.matrix is not None))

    def with_lookups(self, xp: Any, matrix_arcs: tuple[tuple[int, int, int], ...], maps: bool) -> CandidateEdges:
        """This index (in ``xp``'s memory) with position maps where ``maps`` and the bit matrices of
        ``matrix_arcs`` built again (see :meth:`without_lookups`)."""
        if not maps:
            return self
        positions = [position_map(self.n, c) for c in self.candidates]
        arcs = {}
        for k, a in self.arcs.items():
            matrix = None
            if k in matrix_arcs:
                size, width = int(self.candidates[a.u].shape[0]), int(self.candidates[a.w].shape[0])
                rows = xp.repeat(xp.arange(size, dtype=xp.int64), xp.diff(a.offsets))
                matrix = bit_words(xp, rows * width + positions[a.w][a.values].astype(xp.int64), size * width)
            arcs[k] = ArcIndex(a.u, a.w, a.label, a.offsets, a.values, a.keys, matrix)
        return CandidateEdges(self.candidates, arcs, self.passes, self.removed, self.n, positions)

    def position(self, xp: Any, u: int, v: Any) -> Any:
        """Positions (int32 from a map, else int64) of the data vertices ``v``, all candidates of ``u``, in
        ``u``'s candidates."""
        if self.positions is not None:
            return ops.take(self.positions[u], v)
        return xp.searchsorted(self.candidates[u], v)

    def contains(self, xp: Any, arc_key: tuple[int, int, int], v: Any, x: Any) -> Any:
        """Mask: ``x[i]`` lies in the run of ``v[i]`` (a candidate of the arc's source) of arc ``arc_key``,
        i.e. ``(v[i], x[i])`` is a candidate edge (``x`` may hold any data vertices).  One lookup in the arc's
        bit matrix where it has one, else one binary search over its keys (few and cache-resident next to the
        whole graph's adjacency)."""
        return self.probe(xp, arc_key, self.position(xp, arc_key[0], v), x)

    def probe(self, xp: Any, arc_key: tuple[int, int, int], p: Any, x: Any) -> Any:
        """:meth:`contains` given the positions ``p`` (as :meth:`position` gives them) of the sources in their
        candidates instead of the sources (a join finds them once per row, not once per entry)."""
        arc = self.arcs[arc_key]
        if not arc.keys.shape[0]:
            return xp.zeros(x.shape[0], dtype=bool)
        if arc.matrix is not None and self.positions is not None:  # matrices are built only beside position maps
            # Bits of a matrix are numbered below 2**31 (MATRIX_BYTES): int32 arithmetic is exact.
            q = self.positions[arc_key[1]][x]
            inside = q >= 0
            return member(xp, arc.matrix, xp.where(inside, p * int(self.candidates[arc_key[1]].shape[0]) + q, 0)) \
                & inside
        key = p.astype(xp.int64) * self.n + x
        at = xp.minimum(xp.searchsorted(arc.keys, key), arc.keys.shape[0] - 1)
        return arc.keys[at] == key

    @property
    def nbytes(self) -> int:
        """Device bytes of the index and the refined candidates."""
        arcs = sum(int(a.offsets.nbytes) + int(a.values.nbytes) + int(a.keys.nbytes) +
                   (0 if a.matrix is None else int(a.matrix.nbytes)) for a in self.arcs.values())
        maps = 0 if self.positions is None else sum(int(m.nbytes) for m in self.positions)
        return arcs + maps + sum(int(c.nbytes) for c in self.candidates)


def query_arcs(query: Graph) -> list[tuple[int, int, int]]:
    """Every query arc ``(u, w, label)``: ``w`` in ``N_Q(u, label)``, each undirected edge in both directions."""
    return [(u, w, e) for u, nbrs in enumerate(query_adjacency(query)) for w, e in nbrs]


@dataclass(frozen=True)
class LabelledRuns:
    """The data adjacency regrouped by the neighbours' vertex labels: with ``k = (v * L + e) * labels + l`` (``L``
    the index's ``num_labels``), ``nbr[offsets[k]:offsets[k + 1]]`` is the sorted run of the neighbours of ``v``
    through effective label ``e`` that have vertex label ``l``."""

    nbr: Any      # int32[nnz]
    offsets: Any  # int64[n * L * labels + 1]
    labels: int   # vertex labels are below this

    def bounds(self, xp: Any, idx: DataIndex, v: Any, label: int, vertex_label: int) -> tuple[Any, Any]:
        """Start and end of the run of neighbours with vertex label ``vertex_label`` of each vertex in ``v``
        through effective label ``label`` (empty runs give s == t)."""
        if not (0 <= label < idx.num_labels and 0 <= vertex_label < self.labels):
            z = xp.zeros(v.shape[0], dtype=xp.int64)
            return z, z
        key = (v.astype(xp.int64) * idx.num_labels + label) * self.labels + vertex_label
        return self.offsets[key], self.offsets[key + 1]


#: The regrouped adjacency (a neighbour per entry, an offset per vertex, effective label and vertex label) is built
#: for data graphs with several vertex labels while it fits this many bytes, and kept as long as the index lives.
LABELLED_RUNS_BYTES = 256 << 20

_RUNS = caches.cache("labelled runs", "DataIndex -> its adjacency regrouped by neighbour label (LabelledRuns)")


def labelled_runs(backend: Backend, idx: DataIndex) -> LabelledRuns | None:
    """The :class:`LabelledRuns` of ``idx`` (built once per index), or None: one vertex label (nothing to skip) or
    over :data:`LABELLED_RUNS_BYTES`."""
    labels = max(idx.vertices_by_label, default=0) + 1
    keys = idx.n * idx.num_labels * labels
    nnz = int(idx.nbr.shape[0])
    # Vertex labels number the offsets, so they must be non-negative.
    if len(idx.vertices_by_label) < 2 or min(idx.vertices_by_label) < 0 or \
            8 * (keys + 1) + 4 * nnz > LABELLED_RUNS_BYTES:
        return None
    cached = _RUNS.get(idx)
    if cached is not None:
        return cached
    xp = backend.xp
    key = backend.expand(idx.degrees)[0] if idx.num_labels == 1 else entry_run_keys(idx, xp)
    # Entries are sorted by (vertex, effective label, neighbour): a stable sort on the key with the neighbour's
    # label appended keeps each new run sorted by neighbour.
    key = ops.scaled_add(key, labels, ops.take(ops.cast(idx.vertex_labels, np.int32), idx.nbr))
    offsets = xp.zeros(keys + 1, dtype=xp.int64)
    ops.cumsum(bincount(key, keys), out=offsets[1:])
    return _RUNS.put(idx, LabelledRuns(ops.take(idx.nbr, stable_order(key, keys)), offsets, labels))


def scan_entries(backend: Backend, idx: DataIndex, candidates: Sequence[Any], query: Graph) -> int:
    """Adjacency entries one pass over every query arc scans (the work and memory measure of a build).

    Arcs leaving one query vertex with one label scan the same runs, so each such group is read once; on a graph
    with one effective label every run is a whole adjacency row (its length the degree) and one gather does."""
    xp = backend.xp
    if idx.num_labels == 1 and not query.neighbor_labels.any():
        # A query vertex's arcs number its degree, and each scans whole rows of its candidates.
        return ops.weighted_take_sum(idx.degrees, list(candidates), query.degrees)
    groups = Counter((u, e) for u, _, e in query_arcs(query))
    total = 0
    for (u, e), k in groups.items():
        s, t = backend.run_bounds(idx, candidates[u], e)
        total += k * int(xp.sum(t - s)) if s.shape[0] else 0
    return total


#: Adjacency entries :func:`arc_edge_counts` reads per pass (bounds its temporaries to a few hundred MB).
COUNT_CHUNK_ENTRIES = 1 << 23


def arc_edge_counts(backend: Backend, idx: DataIndex, candidates: list[Any], arc: tuple[int, int, int]) -> Any:
    """Per candidate ``v`` of ``u`` (in ``candidates[u]``'s order), the candidate edges of the query arc
    ``arc = (u, w, label)`` before refinement: ``|N(v, label) ∩ C(w)|``, the rows ``v`` makes when a join visits
    ``w`` after ``u`` (int64)."""
    xp = backend.xp
    u, w, label = arc
    inside = xp.zeros(idx.n, dtype=bool)
    inside[candidates[w]] = True
    s, t = backend.run_bounds(idx, candidates[u], label)
    lengths = t - s
    out = xp.zeros(lengths.shape[0], dtype=xp.int64)
    for a, b in chunk_ranges(xp, lengths, COUNT_CHUNK_ENTRIES):
        row, x = backend.gather_runs(idx.nbr, s[a:b], lengths[a:b])
        hit = inside[x]
        out[a:b] = bincount(row[hit], b - a)
    return out


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


def position_map(n: int, members: Any) -> Any:
    """int32[n]: each data vertex's position in the sorted ``members``, -1 if not among them."""
    return ops.scatter(members, ops.arange_like(members, int(members.shape[0]), dtype=np.int32), n, fill=-1)
