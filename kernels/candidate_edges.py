"""Candidate refinement and the candidate-edge index (EGSM's candidate edges, gMatch's candidate graph).

For a query arc ``u -> w`` with effective label ``e`` (as seen from ``u``), the *candidate edges* are the data
pairs ``(v, x)`` with ``v`` in ``C(u)``, ``x`` in ``N(v, e)`` and ``x`` in ``C(w)``.  They are stored per arc as a
CSR over the positions of ``C(u)``: ``values[offsets[i]:offsets[i + 1]]`` is the sorted run ``N(C(u)[i], e) ∩
C(w)``.  Joins that read these runs touch only vertices that can still match, not the whole data adjacency (with
16 vertex labels a sixteenth of it), and the run lengths give the cost model exact fan-outs.  A data vertex's
position in ``C(u)`` is read from a per-query-vertex map, and "is ``(v, x)`` a candidate edge?" from a per-arc bit
matrix over ``C(u) x C(w)``, where those fit their byte bounds; elsewhere both are binary searches (candidate
arrays and each arc's keys are sorted).

The index is built over the candidates that refinement leaves (:mod:`distsm.kernels.refinement`, which reads the
data adjacency regrouped by neighbour label here, :class:`LabelledRuns`).

Everything is array-level code over the backend's ``xp`` (NumPy or CuPy), vectorised over candidate edges.
"""

from __future__ import annotations

from collections import Counter
import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import chunk_ranges
from distsm.kernels.vertex_sets import bit_words, member
from distsm.kernels.array_ops import bincount, stable_order
from distsm.kernels.index import DataIndex, entry_run_keys
from distsm import caches
from distsm.kernels.order import query_adjacency

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

    def only(self, arcs: Collection[tuple[int, int, int]]) -> CandidateEdges:
        """The same index with the arcs ``arcs`` alone (what one plan reads: a device copy of the others would be
        made for nothing, and the copy costs by the array)."""
        return dataclasses.replace(self, arcs={k: a for k, a in self.arcs.items() if k in arcs})

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

    def probe(self, xp: Any, arc_key: tuple[int, int, int], p: Any, x: Any, matrix: Any = None) -> Any:
        """:meth:`contains` given the positions ``p`` (as :meth:`position` gives them) of the sources in their
        candidates instead of the sources (a join finds them once per row, not once per entry).  ``matrix``: the
        arc's matrix as the caller holds it (a byte per bit, say; :func:`~distsm.kernels.vertex_sets.member`
        reads either), else the index's."""
        arc = self.arcs[arc_key]
        if not arc.keys.shape[0]:
            return xp.zeros(x.shape[0], dtype=bool)
        if arc.matrix is not None and self.positions is not None:  # matrices are built only beside position maps
            q = ops.take(self.positions[arc_key[1]], x)
            inside = q >= 0
            bits = arc.matrix if matrix is None else matrix
            return member(xp, bits, xp.where(inside, self.bit(arc_key, p, q), 0)) & inside
        key = p.astype(xp.int64) * self.n + x
        at = xp.minimum(xp.searchsorted(arc.keys, key), arc.keys.shape[0] - 1)
        return arc.keys[at] == key

    def bit(self, arc_key: tuple[int, int, int], p: Any, q: Any) -> Any:
        """The bits of arc ``arc_key``'s matrix of the pairs of the ``p``-th candidate of its source and the
        ``q``-th of its target."""
        # Bits of a matrix are numbered below 2**31 (MATRIX_BYTES): int32 arithmetic is exact.
        return p * int(self.candidates[arc_key[1]].shape[0]) + q

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


def position_map(n: int, members: Any) -> Any:
    """int32[n]: each data vertex's position in the sorted ``members``, -1 if not among them."""
    return ops.scatter(members, ops.arange_like(members, int(members.shape[0]), dtype=np.int32), n, fill=-1)
