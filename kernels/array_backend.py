"""The join's primitives written against an array module (NumPy, or CuPy at array level).

:class:`ArrayBackend` is the reference implementation of the backend interface the engine drives.  Everything
is vectorised over the rows of the partial-match table and the entries of one expansion chunk; there is no
Python loop over rows.  The CuPy backend subclasses it and replaces the hot primitives with RawModule kernels.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.index import DataIndex, build_index
from distsm.kernels.query_plan import ARC_TO_NEW, UNDIRECTED, PrimeEdge, QueryPlan, Step
from distsm.kernels.signature import signatures

#: What ``restrict`` maps a query vertex to: allowed data vertices, or a ``range`` of allowed ids (cheap to ship).
Allowed = np.ndarray | range


def restricted(xp: Any, members: Any, allowed: Allowed) -> Any:
    """The entries of the sorted vertex array ``members`` that ``allowed`` admits (still sorted)."""
    if isinstance(allowed, range):
        if allowed.step != 1:
            raise ValueError("a range of allowed vertices must have step 1")
        lo, hi = xp.searchsorted(members, xp.asarray([allowed.start, allowed.stop], dtype=members.dtype)).tolist()
        return members[lo:hi]
    return members[xp.isin(members, xp.asarray(np.asarray(allowed, dtype=members.dtype)))]


@dataclass
class Descent:
    """What :meth:`ArrayBackend.descend` did with a table at level ``start``.

    ``level`` is the level reached.  Finished (``level`` equals the query size): ``count`` matches, whose rows
    are ``table`` unless counting.  Stopped (a level too large to fuse): ``table`` is the partial-match table of
    ``level`` and ``workload`` its :meth:`~ArrayBackend.workload`, ready for the level-by-level path.
    ``levels`` holds ``(output space, survivors)`` of every level extended on the way.
    """

    level: int
    table: Any
    count: int
    workload: tuple[Any, Any, int] | None
    levels: list[tuple[int, int]]


class ArrayBackend:
    """Backend over an array module ``xp``.

    The engine calls, per query: :meth:`index` (cached per graph), :meth:`candidates`, then per level and chunk
    :meth:`workload` and :meth:`extend`, after offering each table to :meth:`descend` (a fused path for small
    tables, where the backend has one).
    """

    name = "array"
    vertex_dtype = np.int32

    def __init__(self, xp: Any):
        self.xp = xp

    # ------------------------------------------------------------------ data graph
    def index(self, graph: Graph) -> DataIndex:
        """The graph's :class:`DataIndex` on this backend, built once and cached on the graph."""
        key = f"index:{self.name}"
        idx = graph._derived.get(key)
        if idx is None:
            idx = build_index(graph, self.xp)
            graph._derived[key] = idx
        return idx

    def release(self, graph: Graph) -> None:
        """Drop ``graph``'s cached index (its device memory returns to the pool once no one holds it)."""
        graph._derived.pop(f"index:{self.name}", None)

    def host_resident(self, host: DataIndex, share: bool = False) -> DataIndex:
        """An index whose adjacency stays in host memory and is read in place by this backend's join (the CPU
        reads host memory anyway: ``host`` itself, whose memory maps every process shares whatever ``share``)."""
        return host

    def adopt_index(self, idx: DataIndex) -> DataIndex:
        """``idx`` ready for this backend's kernels (its arrays must already be on ``xp``)."""
        return idx

    def with_adjacency(self, core: DataIndex, **arrays: Any) -> DataIndex:
        """``core`` (an adopted index) with its adjacency arrays (``nbr``, ``indptr``, ``run_*``, ``entry_keys``,
        ``pair_keys``) replaced by ``arrays``, e.g. a piece gathered from host memory."""
        extra = sum(int(v.nbytes) for k, v in arrays.items() if v is not None and k != "pair_keys")
        return dataclasses.replace(core, nbytes=core.nbytes + extra, **arrays)

    def to_host(self, a: Any) -> np.ndarray:
        return np.asarray(a)

    def synchronize(self) -> None:
        """Wait for queued device work (timers read after it); the CPU has none."""

    def host(self) -> ArrayBackend:
        """The backend for work too small to be worth a device: itself on the CPU."""
        return self

    def default_budget(self) -> int:
        """Bytes a join may hold when the caller sets no ``memory_budget``."""
        from distsm.kernels.engine import default_cpu_budget

        return default_cpu_budget()

    # ------------------------------------------------------------------ filter
    def candidates(self, idx: DataIndex, query: Graph, *, homomorphism: bool,
                   restrict: dict[int, Allowed] | None = None) -> list[Any]:
        """Candidate vertex arrays (sorted data ids) of each query vertex.

        ``v`` is a candidate of ``u`` iff labels agree, ``v``'s signature covers ``u``'s and (unless
        ``homomorphism``) ``deg(v) >= deg(u)``.  ``restrict[u]`` further limits ``u`` to the given data vertices
        (an array, or a ``range`` of ids).
        """
        xp = self.xp
        qrows = np.repeat(np.arange(query.n), query.degrees)
        qnbr = np.asarray(query.neighbors, np.int64)
        qsig = signatures(np, query.n, qrows, np.asarray(query.neighbor_labels), query.vertex_labels[qnbr],
                          presence_only=homomorphism)
        qdeg = query.degrees
        empty = xp.zeros(0, dtype=self.vertex_dtype)
        out = []
        for u in range(query.n):
            pool = idx.vertices_by_label.get(int(query.vertex_labels[u]), empty)
            if restrict is not None and u in restrict:
                pool = restricted(xp, pool, restrict[u])
            if pool.size:
                keep = xp.ones(pool.shape[0], dtype=bool)
                for w in range(qsig.shape[0]):
                    q = int(qsig[w, u])
                    if q:
                        keep &= (idx.sig[w][pool] & np.uint32(q)) == np.uint32(q)
                if not homomorphism:
                    keep &= idx.degrees[pool] >= int(qdeg[u])
                pool = pool[keep]
            out.append(pool)
        return out

    def bitset(self, idx: DataIndex, members: Any) -> Any:
        """A ``uint32`` bitset over the data vertices with the given members."""
        xp = self.xp
        words = xp.zeros((idx.n + 31) // 32, dtype=xp.uint32)
        m = members.astype(xp.int64)
        # Members are unique, so adding disjoint bits per word equals OR-ing them.
        vals = xp.left_shift(xp.uint32(1), (m & 31).astype(xp.uint32))
        xp.add.at(words, m >> 5, vals)
        return words

    # ------------------------------------------------------------------ join primitives
    def run_bounds(self, idx: DataIndex, v: Any, label: int) -> tuple[Any, Any]:
        """Start and end (int64) of the run ``N(v, label)`` for each vertex in ``v`` (empty runs give s == t)."""
        xp = self.xp
        if not 0 <= label < idx.num_labels:  # a label the data graph never uses (and keys must not collide)
            z = xp.zeros(v.shape[0], dtype=xp.int64)
            return z, z
        if idx.num_labels == 1:
            return idx.run_start[v], idx.run_end[v]
        key = v.astype(xp.int64) * idx.num_labels + label
        pos = xp.searchsorted(idx.run_keys, key)
        pos = xp.minimum(pos, idx.run_keys.shape[0] - 1)
        found = idx.run_keys[pos] == key
        s = xp.where(found, idx.run_start[pos], 0)
        t = xp.where(found, idx.run_end[pos], 0)
        return s, t

    def expand(self, counts: Any) -> tuple[Any, Any]:
        """``(row, rank)`` for ``counts[r]`` entries of each row ``r``: every entry's row and its rank in it."""
        xp = self.xp
        inclusive = xp.cumsum(counts)
        total = int(inclusive[-1]) if inclusive.shape[0] else 0
        row = xp.searchsorted(inclusive, xp.arange(total, dtype=xp.int64), side="right")
        return row, xp.arange(total, dtype=xp.int64) - (inclusive - counts)[row]

    def has_edge(self, idx: DataIndex, x: Any, label: int, y: Any) -> Any:
        """Boolean mask: ``y[i] in N(x[i], label)``."""
        xp = self.xp
        if not 0 <= label < idx.num_labels:
            return xp.zeros(x.shape[0], dtype=bool)
        if idx.num_labels == 1:
            run = x.astype(xp.int64)
            ok = None
        else:
            key = x.astype(xp.int64) * idx.num_labels + label
            pos = xp.searchsorted(idx.run_keys, key)
            pos = xp.minimum(pos, idx.run_keys.shape[0] - 1)
            ok = idx.run_keys[pos] == key
            run = pos
        ekey = run * idx.n + y
        p = xp.minimum(xp.searchsorted(idx.entry_keys, ekey), idx.entry_keys.shape[0] - 1)
        hit = idx.entry_keys[p] == ekey
        return hit if ok is None else hit & ok

    def pair_count(self, idx: DataIndex, x: Any, y: Any) -> Any:
        """Number of adjacency entries from ``x[i]`` to ``y[i]`` over all effective labels."""
        xp = self.xp
        key = x.astype(xp.int64) * idx.n + y
        return xp.searchsorted(idx.pair_keys, key, side="right") - xp.searchsorted(idx.pair_keys, key, side="left")

    def workload(self, idx: DataIndex, table: Any, step: Step) -> tuple[Any, np.ndarray, int]:
        """Per-row output bound of a level: ``(delta, offsets, total)``.

        ``offsets`` (host int64, inclusive prefix sum) gives each row its slice of the level's output space of
        ``total`` entries; entry ``p`` of row ``r`` reads ``nbr[p + delta[r]]``.
        """
        xp = self.xp
        s, t = self.run_bounds(idx, table[:, step.first_col], step.first_label)
        c = t - s
        inclusive = xp.cumsum(c)
        delta = s - (inclusive - c)
        offsets = self.to_host(inclusive)
        return delta, offsets, int(offsets[-1]) if offsets.shape[0] else 0

    def descend(self, idx: DataIndex, table: Any, level: int, plan: QueryPlan, bits: list[Any], count_only: bool,
                cap: int, spanning: Spanning | None = None) -> Descent | None:
        """Extend ``table`` (at ``level``) through the following levels in one fused call while every level's
        output space stays within ``cap`` entries; None where this backend has no fused path (the engine then
        goes level by level, as it does from wherever a :class:`Descent` stops).  ``bits`` holds each query
        vertex's candidate bitset; the last level of a count is only counted."""
        return None

    def extend(self, idx: DataIndex, table: Any, step: Step, delta: Any, offsets: np.ndarray, a: int, b: int,
               bits: Any, count_only: bool, spanning: Spanning | None = None) -> Any:
        """Extend ``table`` through entries ``[a, b)`` of the level's output space.

        Returns the surviving rows with the new vertex appended as the last column, or (``count_only``) just
        how many survive.  ``spanning`` (inter-partition search) adds the cross-edge and DUPREMOVE filters.
        """
        xp = self.xp
        r0 = int(np.searchsorted(offsets, a, side="right"))
        r1 = int(np.searchsorted(offsets, b - 1, side="right")) + 1
        off = offsets[r0:r1]
        prev = np.empty_like(off)
        prev[0] = offsets[r0 - 1] if r0 else 0
        prev[1:] = off[:-1]
        counts = np.minimum(off, b) - np.maximum(prev, a)
        rowid = xp.repeat(xp.arange(r0, r1, dtype=xp.int64), xp.asarray(counts))
        pos = xp.arange(a, b, dtype=xp.int64)
        cand = idx.nbr[pos + delta[rowid]]
        word = bits[cand >> 5]
        keep = ((word >> (cand & 31).astype(xp.uint32)) & xp.uint32(1)).astype(bool)
        rowid, cand = rowid[keep], cand[keep]
        for col in step.greater_than:
            keep = cand > table[rowid, col]
            rowid, cand = rowid[keep], cand[keep]
        for col in step.less_than:
            keep = cand < table[rowid, col]
            rowid, cand = rowid[keep], cand[keep]
        if step.distinct_cols and cand.size:
            clash = (table[rowid][:, list(step.distinct_cols)] == cand[:, None]).any(axis=1)
            rowid, cand = rowid[~clash], cand[~clash]
        for col, label in step.checks:
            if not cand.size:
                break
            keep = self.has_edge(idx, table[rowid, col], label, cand)
            rowid, cand = rowid[keep], cand[keep]
        for col, need in step.pair_checks:
            if not cand.size:
                break
            # The entry count between two vertices is symmetric (an arc is stored at both ends); reading the column
            # vertex's row keeps every lookup inside the rows a gathered piece holds.
            keep = self.pair_count(idx, table[rowid, col], cand) == need
            rowid, cand = rowid[keep], cand[keep]
        if spanning is not None and cand.size:
            keep = spanning.keep(xp, idx.n, table, rowid, cand, step)
            rowid, cand = rowid[keep], cand[keep]
        if count_only:
            return int(cand.shape[0])
        return xp.concatenate([table[rowid], cand[:, None].astype(table.dtype)], axis=1)


@dataclass(frozen=True)
class Spanning:
    """What a spanning (inter-partition) search needs beyond the plan: the part of every data vertex."""

    part: Any                 # int32[n] on the backend's device
    prime: PrimeEdge | None   # None for a global join restricted to spanning matches

    def edge_key(self, xp: Any, n: int, x: Any, y: Any, arc: int) -> Any:
        """Sort key of the data edge between ``x`` (a column vertex) and ``y`` (the new vertex)."""
        x, y = x.astype(xp.int64), y.astype(xp.int64)
        if arc == UNDIRECTED:
            return xp.minimum(x, y) * n + xp.maximum(x, y)
        return x * n + y if arc == ARC_TO_NEW else y * n + x

    def keep(self, xp: Any, n: int, table: Any, rowid: Any, cand: Any, step: Step) -> Any:
        """Mask of candidates that pass the cross-edge and DUPREMOVE tests of ``step``."""
        part = self.part
        keep = xp.ones(cand.shape[0], dtype=bool)
        if step.cross_first:
            keep &= part[cand] != part[table[rowid, step.first_col]]
        if step.require_spanning:
            keep &= (part[table[rowid]] != part[cand][:, None]).any(axis=1)
        if not step.dup_checks:
            return keep
        arc = UNDIRECTED if not self.prime.directed else ARC_TO_NEW
        second = cand if table.shape[1] == 1 else table[rowid, 1]
        prime_key = self.edge_key(xp, n, table[rowid, 0], second, arc)
        for col, code, j in step.dup_checks:
            other = table[rowid, col]
            key = self.edge_key(xp, n, other, cand, code)
            earlier = (key < prime_key) | ((key == prime_key) & (j < self.prime.edge_index))
            keep &= ~((part[other] != part[cand]) & earlier)
        return keep


class NumpyBackend(ArrayBackend):
    """The CPU reference backend."""

    name = "numpy"

    def __init__(self) -> None:
        super().__init__(np)

    def expand(self, counts: Any) -> tuple[Any, Any]:
        counts = np.asarray(counts, dtype=np.int64)
        row = np.repeat(np.arange(counts.shape[0]), counts)
        return row, np.arange(row.shape[0], dtype=np.int64) - (np.cumsum(counts) - counts)[row]
