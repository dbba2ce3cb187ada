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
is read once per query edge; later passes filter the candidate edges found then.

Everything is array-level code over the backend's ``xp`` (NumPy or CuPy), vectorised over candidate edges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.array_backend import bit_words, member
from distsm.kernels.index import DataIndex
from distsm.kernels.order import query_adjacency

#: Refinement passes at most (each pass visits every query edge once; the first reads the data adjacency, the
#: others only filter the candidate edges found then, so a pass costs little next to the first).
REFINE_PASSES = 8

#: Bytes one scanned adjacency entry may occupy while an arc's candidate edges are built (row ids, positions,
#: the neighbour, the mask and the kept values).
SCAN_ENTRY_BYTES = 40

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
        """The same index with every array passed through ``move`` (e.g. a device's ``xp.asarray``: planned on the
        host, joined on a GPU; or a backend's ``to_host``: refined on a GPU, planned on the host)."""
        def moved(a: Any) -> Any:
            return None if a is None else move(a)

        arcs = {k: ArcIndex(a.u, a.w, a.label, move(a.offsets), move(a.values), move(a.keys), moved(a.matrix))
                for k, a in self.arcs.items()}
        positions = None if self.positions is None else [move(m) for m in self.positions]
        return CandidateEdges([move(c) for c in self.candidates], arcs, self.passes, self.removed, self.n,
                              positions)

    def position(self, xp: Any, u: int, v: Any) -> Any:
        """Positions (int32 from a map, else int64) of the data vertices ``v``, all candidates of ``u``, in
        ``u``'s candidates."""
        if self.positions is not None:
            return self.positions[u][v]
        return xp.searchsorted(self.candidates[u], v)

    def contains(self, xp: Any, arc_key: tuple[int, int, int], v: Any, x: Any) -> Any:
        """Mask: ``x[i]`` lies in the run of ``v[i]`` (a candidate of the arc's source) of arc ``arc_key``,
        i.e. ``(v[i], x[i])`` is a candidate edge (``x`` may hold any data vertices).  One lookup in the arc's
        bit matrix where it has one, else one binary search over its keys (few and cache-resident next to the
        whole graph's adjacency)."""
        arc = self.arcs[arc_key]
        if not arc.keys.shape[0]:
            return xp.zeros(x.shape[0], dtype=bool)
        p = self.position(xp, arc_key[0], v)
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


def scan_entries(backend: Backend, idx: DataIndex, candidates: list[Any], query: Graph) -> int:
    """Adjacency entries one pass over every query arc scans (the work and memory measure of a build).

    Arcs leaving one query vertex with one label scan the same runs, so each such group is read once; on a graph
    with one effective label every run is a whole adjacency row (its length the degree) and one gather does."""
    xp = backend.xp
    if idx.num_labels == 1 and not query.neighbor_labels.any():
        # A query vertex's arcs number its degree, and each scans whole rows of its candidates.
        weights = np.repeat(query.degrees.astype(np.int64), [int(c.shape[0]) for c in candidates])
        if not weights.shape[0]:
            return 0
        return int((idx.degrees[xp.concatenate(candidates)].astype(xp.int64) * xp.asarray(weights)).sum())
    groups = Counter((u, e) for u, _, e in query_arcs(query))
    total = 0
    for (u, e), k in groups.items():
        s, t = backend.run_bounds(idx, candidates[u], e)
        total += k * int(xp.sum(t - s)) if s.shape[0] else 0
    return total


def scan_arc(backend: Backend, idx: DataIndex, cu: Any, label: int, bits_w: Any) -> tuple[Any, Any]:
    """Candidate edges ``(v, x)`` of an arc given ``C(u)`` (sorted) and ``C(w)``'s bitset, read from the data
    adjacency: ``v`` in ``C(u)``, ``x`` in ``N(v, label)`` and in ``C(w)``, sorted by ``v`` then ``x``."""
    s, t = backend.run_bounds(idx, cu, label)
    row, rank = backend.expand(t - s)
    x = idx.nbr[s[row] + rank]
    keep = member(backend.xp, bits_w, x)
    return cu[row[keep]], x[keep]


def arc_index(xp: Any, n: int, u: int, w: int, label: int, cu: Any, v: Any, x: Any,
              matrix_of: Any = None) -> ArcIndex:
    """The :class:`ArcIndex` of arc ``u -> w`` from its candidate edges ``(v, x)`` (any order; every ``v`` in the
    sorted ``C(u)``); ``matrix_of(rows, x)``, when given, builds its bit matrix from the rows' positions."""
    rows = xp.searchsorted(cu, v).astype(xp.int64)
    keys = rows * n + x
    order = xp.argsort(keys, kind="stable")
    kept = xp.bincount(rows, minlength=int(cu.shape[0])).astype(xp.int64)
    offsets = xp.zeros(int(cu.shape[0]) + 1, dtype=xp.int64)
    offsets[1:] = xp.cumsum(kept)
    matrix = None if matrix_of is None else matrix_of(rows, x)
    return ArcIndex(u, w, label, offsets, x[order].astype(xp.int32), keys[order], matrix)


def build(backend: Backend, idx: DataIndex, query: Graph, candidates: list[Any], *,
          passes: int = REFINE_PASSES, lookup_bytes: int = POSITION_BYTES + MATRIX_BYTES) -> CandidateEdges:
    """Refine ``candidates`` (up to ``passes`` passes) and build every arc's candidate edges over the result.

    Position maps and arc bit matrices take at most ``lookup_bytes`` (and :data:`POSITION_BYTES` and
    :data:`MATRIX_BYTES`); lookups they cannot serve are binary searches.

    The data adjacency is read once per query edge (an arc and its reverse hold the same data edges, the reverse
    one with effective label ``e ^ 1`` on directed graphs): later passes only drop the edges whose endpoints lost
    their candidacy, so they cost the candidate edges, not the adjacency they were found in."""
    xp = backend.xp
    cands = list(candidates)
    before = sum(int(c.shape[0]) for c in cands)
    bits = [backend.bitset(idx, c) for c in cands]

    def reverse(arc: tuple[int, int, int]) -> tuple[int, int, int]:
        u, w, e = arc
        return (w, u, e ^ 1 if query.directed else e)

    edges: dict[tuple[int, int, int], tuple[Any, Any]] = {}
    # An arc's edges are current while neither end's candidates changed since they were last filtered.
    version = [0] * len(cands)
    current: dict[tuple[int, int, int], tuple[int, int]] = {}

    def filtered(arc: tuple[int, int, int]) -> tuple[Any, Any]:
        u, w, _ = arc
        v, x = edges[arc]
        if current[arc] != (version[u], version[w]):
            keep = member(xp, bits[u], v) & member(xp, bits[w], x)
            v, x = v[keep], x[keep]
        return v, x

    canonical = [a for a in query_arcs(query) if a <= reverse(a)]
    done = 0
    for _ in range(passes):
        done += 1
        changed = False
        for arc in canonical:
            u, w, e = arc
            if arc not in edges:
                edges[arc] = scan_arc(backend, idx, cands[u], e, bits[w])
            elif current[arc] == (version[u], version[w]):
                continue
            else:
                edges[arc] = filtered(arc)
            v, x = edges[arc]
            # v is sorted: its distinct values are where it changes.
            first = xp.ones(int(v.shape[0]), dtype=bool)
            first[1:] = v[1:] != v[:-1]
            for t, supported in ((u, v[first]), (w, xp.unique(x))):
                if int(supported.shape[0]) < int(cands[t].shape[0]):
                    cands[t] = supported.astype(cands[t].dtype)
                    bits[t] = backend.bitset(idx, cands[t])
                    version[t] += 1
                    changed = True
            current[arc] = (version[u], version[w])
        if not changed:
            break
    positions = None
    maps_bytes = 4 * idx.n * len(cands)
    if maps_bytes <= min(POSITION_BYTES, lookup_bytes):
        positions = []
        for c in cands:
            m = xp.full(idx.n, -1, dtype=xp.int32)
            m[c] = xp.arange(int(c.shape[0]), dtype=xp.int32)
            positions.append(m)
    matrix_left = min(MATRIX_BYTES, lookup_bytes - maps_bytes)

    def matrix_maker(u: int, w: int) -> Any:
        nonlocal matrix_left
        width = int(cands[w].shape[0])
        size = 4 * ((int(cands[u].shape[0]) * width + 31) // 32)
        if positions is None or not 0 < size <= matrix_left:
            return None
        matrix_left -= size

        def make(rows: Any, x: Any) -> Any:
            # Edges are distinct, so their bits are.
            return bit_words(xp, rows * width + positions[w][x].astype(xp.int64), int(cands[u].shape[0]) * width)
        return make

    index = {}
    for arc in canonical:
        u, w, e = arc
        v, x = filtered(arc)
        index[arc] = arc_index(xp, idx.n, u, w, e, cands[u], v, x, matrix_maker(u, w))
        u, w, e = reverse(arc)
        index[(u, w, e)] = arc_index(xp, idx.n, u, w, e, cands[u], x, v, matrix_maker(u, w))
    after = sum(int(c.shape[0]) for c in cands)
    return CandidateEdges(cands, index, done, before - after, idx.n, positions)
