"""The join's primitives written against an array module (NumPy, or CuPy at array level).

:class:`ArrayBackend` is the reference implementation of the backend interface the engine drives.  Everything
is vectorised over the rows of the partial-match table and the entries of one expansion chunk; there is no
Python loop over rows.  The CuPy backend subclasses it and replaces the hot primitives with RawModule kernels.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import array_ops, dfs_host
from distsm.kernels.budget import BudgetPlan, default_cpu_budget
from distsm.kernels.dfs_plan import DfsProgram
from distsm.kernels.batch import join_counts
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex, build_index
from distsm import caches
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.query_plan import Allowed, QueryPlan, Step
from distsm.kernels.records import (Control, Descent, LevelExtension, Spanning, TrailingProgram,
                                    TrailingTotals)
from distsm.kernels import candidate_filter
from distsm.kernels.vertex_sets import MASK_VERTICES, bit_words, member, restricted

if TYPE_CHECKING:
    from distsm.kernels.backend import Backend
    from distsm.kernels.prepared import PreparedQuery

#: Tables of at most this many rows read a level's entries as slices of the adjacency (see ``_entries``).
SLICED_ROWS = 32

#: Each graph's index on each backend (by the backend's name).
INDEXES = caches.cache("indexes", "Graph, backend name -> its DataIndex (GpuIndex on a device)")


class ArrayBackend:
    """Backend over an array module ``xp``.

    The engine calls, per query: :meth:`index` (cached per graph), :meth:`candidates`, then per level and chunk
    :meth:`workload` and :meth:`extend`, after offering each table to :meth:`descend` (a fused path for small
    tables, where the backend has one).
    """

    name = "array"
    on_device = False
    vertex_dtype: type[np.generic] = np.int32

    def __init__(self, xp: Any):
        self.xp = xp
        # Resolved once: run_bounds takes twice per call, and a dispatch per take costs light queries (a dozen
        # levels of a few rows) a few percent.
        self._take = array_ops.take.dispatch(xp.ndarray)

    # ------------------------------------------------------------------ data graph
    def index(self, graph: Graph) -> DataIndex:
        """The graph's :class:`DataIndex` on this backend, built once and cached on the graph."""
        idx: DataIndex = INDEXES.get_or(graph, lambda: build_index(graph, self.xp), self.name)
        return idx

    def share_index(self, graph: Graph, idx: DataIndex) -> None:
        """Take ``idx``, the index of a graph equal to ``graph`` that this backend holds already (a one-part
        store's whole graph), as ``graph``'s own (:meth:`adopt_index`), instead of building a second one."""
        INDEXES.put(graph, self.adopt_index(idx), self.name)

    def release(self, graph: Graph) -> None:
        """Drop ``graph``'s cached index (its device memory returns to the pool once no one holds it)."""
        INDEXES.pop(graph, self.name)

    def host_resident(self, host: DataIndex, in_place: bool = False) -> DataIndex:
        """An index whose adjacency stays in host memory and is read in place by this backend's join (the CPU
        reads host memory anyway: ``host`` itself, whose memory maps every process shares whatever ``in_place``)."""
        return host

    def adjacency_over_bus(self, idx: DataIndex) -> bool:
        """Whether this backend reads ``idx``'s adjacency from host memory over a bus (a device's zero-copy
        :meth:`host_resident` index: random reads cost far more there than in device memory); the CPU never does."""
        return False

    def adopt_index(self, idx: DataIndex) -> DataIndex:
        """``idx`` ready for this backend's kernels (its arrays must already be on ``xp``)."""
        return idx

    def from_host(self, host: DataIndex) -> DataIndex:
        """``host`` (NumPy arrays, e.g. memory mapped) usable by this backend: on the CPU ``host`` itself, so
        every process on the machine shares one memory map."""
        return host

    def with_adjacency(self, core: DataIndex, **arrays: Any) -> DataIndex:
        """``core`` (an adopted index) with its adjacency arrays (``nbr``, ``indptr``, ``run_*``, ``entry_keys``,
        ``pair_keys``) replaced by ``arrays``, e.g. a piece gathered from host memory."""
        extra = sum(int(v.nbytes) for k, v in arrays.items() if v is not None and k != "pair_keys")
        return dataclasses.replace(core, nbytes=core.nbytes + extra, **arrays)

    def to_host(self, a: Any) -> np.ndarray:
        return np.asarray(a)

    def upload(self, arrays: Sequence[np.ndarray]) -> list[Any]:
        """Host arrays in this backend's memory (a device copies the small ones together: see the CuPy
        backend's)."""
        return [self.xp.asarray(a) for a in arrays]

    def synchronize(self) -> None:
        """Wait for queued device work (timers read after it); the CPU has none."""

    def host(self) -> Backend:
        """The backend for work too small to be worth a device: itself on the CPU."""
        return self

    def release_memory(self) -> None:
        """Hand cached free device memory back (after a cancelled join, or a worker's teardown); the CPU keeps none."""

    def peak_bytes(self) -> int | None:
        """Device bytes in use at most since :meth:`reset_peak`; None on the CPU (callers estimate them)."""
        return None

    def reset_peak(self) -> None: ...

    def available_bytes(self) -> int:
        """Bytes this backend's memory could give a worker now: half the host's physical memory (CPU workers
        share it with everything else on the host)."""
        try:
            return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)
        except (ValueError, OSError, AttributeError):
            return 4 << 30

    def default_budget(self) -> int:
        """Bytes a join may hold when the caller sets no ``memory_budget``."""
        return default_cpu_budget()

    # ------------------------------------------------------------------ filter
    def candidates(self, idx: DataIndex, query: Graph, *, homomorphism: bool,
                   restrict: Mapping[int, Allowed] | None = None) -> list[Any]:
        """Candidate vertex arrays (sorted data ids) of each query vertex: ``v`` is a candidate of ``u`` iff labels
        agree, ``v``'s signature covers ``u``'s and (unless ``homomorphism``) ``deg(v) >= deg(u)``.  ``restrict[u]``
        further limits ``u`` to the given data vertices (an array, or a ``range`` of ids)."""
        out = list(self.candidates_of(idx, [query], homomorphism=homomorphism)[0])
        for u, allowed in (restrict or {}).items():
            # The filter tests each vertex on its own, so restricting its output equals filtering a restricted pool.
            out[u] = restricted(self.xp, out[u], allowed)
        return out

    def candidates_of(self, idx: DataIndex, queries: Sequence[Graph], *, homomorphism: bool,
                      room: int | None = None) -> list[CandidateSets]:
        """:meth:`candidates` of several queries in one pass (a batch's filter), each query's as one
        :class:`~distsm.kernels.candidate_sets.CandidateSets`, in runs whose temporaries hold at most ``room``
        bytes (:func:`~distsm.kernels.candidate_filter.candidates_of`)."""
        return candidate_filter.candidates_of(self, idx, queries, homomorphism, room)

    def bitset(self, idx: DataIndex, members: Any) -> Any:
        """The set ``members`` of data vertices as :func:`member` tests it: a bool mask over the data vertices on
        graphs of at most :data:`MASK_VERTICES` vertices, else a ``uint32`` bitset."""
        xp = self.xp
        if idx.n <= MASK_VERTICES:
            mask = xp.zeros(idx.n, dtype=bool)
            mask[members] = True
            return mask
        return bit_words(xp, members, idx.n)

    def upload_candidates(self, idx: DataIndex, arrays: Sequence[np.ndarray]) -> CandidateSets:
        """Host candidate arrays (one per query vertex, sorted data ids) in this backend's memory as one
        :class:`~distsm.kernels.candidate_sets.CandidateSets`: their concatenation moved in one transfer, each
        vertex's set a view of it (a transfer per vertex costs a device tens of microseconds each)."""
        values = np.concatenate(arrays) if arrays else np.zeros(0, dtype=self.vertex_dtype)
        [moved] = self.upload([values.astype(self.vertex_dtype, copy=False)])
        return CandidateSets(moved, [int(a.shape[0]) for a in arrays])

    # ------------------------------------------------------------------ join primitives
    def run_bounds(self, idx: DataIndex, v: Any, label: int) -> tuple[Any, Any]:
        """Start and end (int64) of the run ``N(v, label)`` for each vertex in ``v`` (empty runs give s == t)."""
        xp = self.xp
        if not 0 <= label < idx.num_labels:  # a label the data graph never uses (and keys must not collide)
            z = xp.zeros(v.shape[0], dtype=xp.int64)
            return z, z
        if idx.num_labels == 1:
            return self._take(idx.run_start, v), self._take(idx.run_end, v)
        key = v.astype(xp.int64, copy=False) * idx.num_labels + label
        pos = xp.searchsorted(idx.run_keys, key)
        pos = xp.minimum(pos, idx.run_keys.shape[0] - 1)
        found = idx.run_keys[pos] == key
        s = xp.where(found, idx.run_start[pos], 0)
        t = xp.where(found, idx.run_end[pos], 0)
        return s, t

    def expand(self, counts: Any) -> tuple[Any, Any]:
        """``(row, rank)`` for ``counts[r]`` entries of each row ``r``: every entry's row and its rank in it."""
        return array_ops.expand(counts)

    def gather_runs(self, values: Any, start: Any, counts: Any) -> tuple[Any, Any]:
        """``(row, x)``: the runs ``values[start[r]:start[r] + counts[r]]`` laid end to end, each entry with its row
        ``r`` (as :meth:`expand` numbers them)."""
        return array_ops.gather_runs(values, start, counts)

    def dfs_count(self, graph: RankedGraph, program: DfsProgram, budget: int,
                  control: Control | None = None, tasks: tuple[int, int] | None = None) -> int:
        """The program's count level by level over chunked tables (:mod:`distsm.kernels.dfs_host`)."""
        return dfs_host.count(self.xp, graph, program, budget, control, tasks)

    def dfs_weigh(self, graph: RankedGraph, program: DfsProgram, weights: Any, budget: int,
                  tasks: tuple[int, int] | None = None) -> int:
        """:meth:`dfs_count` with each match counting the sum of its vertices' ``weights`` (int64 per rank)."""
        return dfs_host.count(self.xp, graph, program, budget, None, tasks, weights)

    def has_edge(self, idx: DataIndex, x: Any, label: int, y: Any) -> Any:
        """Boolean mask: ``y[i] in N(x[i], label)`` (``x`` and ``y`` broadcast: a one-element ``x`` tests every
        ``y`` against one vertex)."""
        xp = self.xp
        if not 0 <= label < idx.num_labels or not idx.entry_keys.shape[0]:  # no such edges (or none at all)
            return xp.zeros(np.broadcast_shapes(x.shape, y.shape), dtype=bool)
        if idx.num_labels == 1:
            run = x.astype(xp.int64, copy=False)
            ok = None
        else:
            key = x.astype(xp.int64, copy=False) * idx.num_labels + label
            pos = xp.searchsorted(idx.run_keys, key)
            pos = xp.minimum(pos, idx.run_keys.shape[0] - 1)
            ok = idx.run_keys[pos] == key
            run = pos
        hit = self._contains(idx.entry_keys, run * idx.n + y)
        return hit if ok is None else hit & ok

    def _contains(self, keys: Any, queries: Any) -> Any:
        """Mask: ``queries[i]`` occurs in the sorted non-empty array ``keys``."""
        xp = self.xp
        p = xp.minimum(xp.searchsorted(keys, queries), keys.shape[0] - 1)
        return keys[p] == queries

    def pair_count(self, idx: DataIndex, x: Any, y: Any) -> Any:
        """Number of adjacency entries from ``x[i]`` to ``y[i]`` over all effective labels."""
        xp = self.xp
        key = x.astype(xp.int64, copy=False) * idx.n + y
        return xp.searchsorted(idx.pair_keys, key, side="right") - xp.searchsorted(idx.pair_keys, key, side="left")

    def workload(self, idx: DataIndex, table: Any, step: Step) -> tuple[Any, np.ndarray, int]:
        """Per-row output bound of a level: ``(delta, offsets, total)``.

        ``offsets`` (host int64, inclusive prefix sum) gives each row its slice of the level's output space of
        ``total`` entries; entry ``p`` of row ``r`` reads ``nbr[p + delta[r]]``.
        """
        delta, inclusive, _ = self._bounds(idx, table, step)
        offsets = self.to_host(inclusive)
        return delta, offsets, int(offsets[-1]) if offsets.shape[0] else 0

    def _bounds(self, idx: DataIndex, table: Any, step: Step) -> tuple[Any, Any, Any]:
        """``(delta, inclusive prefix sum, count)`` per row of ``table`` for ``step``'s first edge (on ``xp``)."""
        s, t = self.run_bounds(idx, table[:, step.first_col], step.first_label)
        c = t - s
        inclusive = c.cumsum()
        return t - inclusive, inclusive, c  # delta: s minus the row's exclusive prefix

    def descend(self, idx: DataIndex, table: Any, level: int, plan: QueryPlan, bits: list[Any], count_only: bool,
                cap: int, spanning: Spanning | None = None) -> Descent | None:
        """Extend ``table`` (at ``level``) through the following levels in one fused call while every level's
        output space stays within ``cap`` entries; None where this backend has no fused path (the engine then
        goes level by level, as it does from wherever a :class:`Descent` stops).  ``bits`` holds each query
        vertex's candidate bitset; the last level of a count is only counted.

        Here the levels run one after another in a plain loop over the same primitives as :meth:`workload` and
        :meth:`extend`, without the engine's chunking generators and without rebuilding each row's entry count
        from the prefix sums (on light queries those cost as much as the array work)."""
        nq = len(plan.order)
        levels: list[tuple[int, int]] = []
        while True:  # the engine descends from levels below nq only; the last level returns
            step = plan.steps[level - 1]
            last = level == nq - 1
            if table.shape[0] == 1 and spanning is None:
                total, out = self._row_extend(idx, table, step, bits[step.vertex], count_only and last, cap)
                if out is None:
                    return Descent(level, table, 0, self.workload(idx, table, step), levels)
            else:
                total, entries = self._entries(idx, table, step, cap)
                if entries is None:
                    return Descent(level, table, 0, self.workload(idx, table, step), levels)
                if total:
                    out = self._survivors(idx, table, step, *entries, bits[step.vertex], count_only and last,
                                          spanning)
                else:
                    out = 0 if count_only and last else table[:0]
            survivors = out if count_only and last else int(out.shape[0])
            levels.append((total, survivors))
            level += 1
            if not survivors or last:
                return Descent(nq, None if count_only else out, survivors, None, levels)
            table = out

    def count_prepared(self, prepared: Sequence[PreparedQuery], allowance: Sequence[int],
                       budget: int | BudgetPlan) -> list[int | None]:
        """Counts of several prepared queries (prepared.PreparedQuery, all on one DataIndex) by their general join,
        together; None for a query whose join would read more than allowance[i] adjacency entries (or outgrow the
        backend's batch buffers), which the caller then counts alone.

        Here one level-synchronous join over a table whose rows carry their query
        (:func:`distsm.kernels.batch.join_counts`), whose groups the caller fits to ``budget``."""
        return join_counts(self, prepared, allowance)

    def _entries(self, idx: DataIndex, table: Any, step: Step, cap: int) -> tuple[int, tuple[Any, Any] | None]:
        """The size of the output space of ``step`` over ``table`` (which has rows) and, when it is at most
        ``cap``, its entries ``(rowid, cand)``: every entry's table row and candidate vertex."""
        xp = self.xp
        if table.shape[0] <= SLICED_ROWS:
            # A few rows: their runs are slices joined in one call, cheaper than prefix sums and a gather of
            # per-entry positions.
            s, t = self.run_bounds(idx, table[:, step.first_col], step.first_label)
            runs = list(zip(s.tolist(), t.tolist()))
            counts = [b - a for a, b in runs]
            total = sum(counts)
            if total > cap:
                return total, None
            cand = xp.concatenate([idx.nbr[a:b] for a, b in runs])
            return total, (xp.arange(table.shape[0]).repeat(counts), cand)
        delta, inclusive, counts = self._bounds(idx, table, step)
        total = int(inclusive[-1])
        if total > cap:
            return total, None
        # Default integer aranges (int64): a dtype keyword costs as much as the array on small tables.
        rowid = xp.arange(table.shape[0]).repeat(counts)
        return total, (rowid, idx.nbr[xp.arange(total) + delta[rowid]])

    def extend(self, idx: DataIndex, table: Any, ext: LevelExtension, a: int, b: int) -> Any:
        """Extend ``table`` through entries ``[a, b)`` of the level's output space.

        Returns the surviving rows with the new vertex appended as the last column, or (``ext.count_only``) just
        how many survive.  ``ext.spanning`` (inter-partition search) adds the cross-edge and DUPREMOVE filters.
        """
        xp, offsets = self.xp, ext.offsets
        if a == 0 and b == int(offsets[-1]):
            r0, counts = 0, offsets.copy()
            counts[1:] -= offsets[:-1]
        else:
            r0 = int(np.searchsorted(offsets, a, side="right"))
            r1 = int(np.searchsorted(offsets, b - 1, side="right")) + 1
            counts = np.minimum(offsets[r0:r1], b)
            counts[0] -= a
            counts[1:] -= np.maximum(offsets[r0:r1 - 1], a)
        rowid = xp.repeat(xp.arange(r0, r0 + counts.shape[0], dtype=xp.int64), xp.asarray(counts))
        cand = idx.nbr[xp.arange(a, b, dtype=xp.int64) + ext.delta[rowid]]
        return self._survivors(idx, table, ext.step, rowid, cand, ext.bits, ext.count_only, ext.spanning)

    def _run_of(self, idx: DataIndex, v: int, label: int) -> tuple[int, int]:
        """Start and end of the run ``N(v, label)`` of one vertex (Python ints; empty runs give equal ones)."""
        if not 0 <= label < idx.num_labels:
            return 0, 0
        if idx.num_labels == 1:
            return int(idx.run_start[v]), int(idx.run_end[v])
        key = v * idx.num_labels + label
        pos = int(idx.run_keys.searchsorted(key))
        if pos == idx.run_keys.shape[0] or int(idx.run_keys[pos]) != key:
            return 0, 0
        return int(idx.run_start[pos]), int(idx.run_end[pos])

    def _row_extend(self, idx: DataIndex, table: Any, step: Step, bits: Any, count_only: bool,
                    cap: int) -> tuple[int, Any]:
        """``(entries read, survivors)`` of ``step`` over a one-row ``table`` (most levels of a light query), or
        ``(entries, None)`` past ``cap`` entries.

        With one row the first edge's run is one slice of the adjacency (no prefix sums), column tests compare with
        the row's values as scalars, and edge checks look candidates up in the column vertex's run, a slice sorted
        by neighbour, instead of per-entry keys."""
        xp = self.xp
        row = table[0].tolist()
        lo, hi = self._run_of(idx, row[step.first_col], step.first_label)
        if hi - lo > cap:
            return hi - lo, None
        cand = idx.nbr[lo:hi]
        cand = cand[member(xp, bits, cand)]
        if (step.greater_than or step.less_than or step.distinct_cols) and cand.shape[0]:
            keep = None
            for cols, op in ((step.greater_than, xp.greater), (step.less_than, xp.less),
                             (step.distinct_cols, xp.not_equal)):
                for col in cols:
                    ok = op(cand, row[col])
                    keep = ok if keep is None else keep & ok
            cand = cand[keep]
        for col, label in step.checks:
            if not cand.shape[0]:
                break
            a, b = self._run_of(idx, row[col], label)
            run = idx.nbr[a:b]
            cand = cand[run.take(run.searchsorted(cand), mode="clip") == cand] if b > a else cand[:0]
        for col, need in step.pair_checks:
            if not cand.shape[0]:
                break
            cand = cand[self.pair_count(idx, table[:1, col], cand) == need]
        if count_only:
            return hi - lo, int(cand.shape[0])
        out = xp.empty((cand.shape[0], len(row) + 1), dtype=table.dtype)
        out[:, :-1] = table
        out[:, -1] = cand
        return hi - lo, out

    def _survivors(self, idx: DataIndex, table: Any, step: Step, rowid: Any, cand: Any, bits: Any, count_only: bool,
                   spanning: Spanning | None) -> Any:
        """The entries ``(table[rowid[i]], cand[i])`` that pass ``step``'s tests, as :meth:`extend` returns them.

        Light queries run tables of a few rows through all their levels, so every array operation saved here is
        saved per level: row gathers go through ``take`` (fancy indexing of 2-D arrays is several times slower),
        column tests read one column at a time (a 2-D comparison and its reduction cost more on small tables).
        Outside spanning searches one-row tables go through :meth:`_row_extend` instead."""
        xp = self.xp
        # Gathers indexed by int32 arrays convert their indices each time: one conversion up front instead.
        cand = cand.astype(xp.int64, copy=False)
        keep = member(xp, bits, cand)
        rowid, cand = rowid[keep], cand[keep]
        if (step.greater_than or step.less_than or step.distinct_cols) and cand.shape[0]:
            tests = ([(col, xp.greater) for col in step.greater_than] + [(col, xp.less) for col in step.less_than]
                     + [(col, xp.not_equal) for col in step.distinct_cols])
            keep = None
            for col, op in tests:
                ok = op(cand, table[:, col].take(rowid))
                keep = ok if keep is None else keep & ok
            rowid, cand = rowid[keep], cand[keep]
        for col, label in step.checks:
            if not cand.shape[0]:
                break
            keep = self.has_edge(idx, table[:, col].take(rowid), label, cand)
            rowid, cand = rowid[keep], cand[keep]
        for col, need in step.pair_checks:
            if not cand.shape[0]:
                break
            # The entry count between two vertices is symmetric (an arc is stored at both ends); reading the column
            # vertex's row keeps every lookup inside the rows a gathered piece holds.
            keep = self.pair_count(idx, table[:, col].take(rowid), cand) == need
            rowid, cand = rowid[keep], cand[keep]
        if spanning is not None and cand.shape[0]:
            keep = spanning.keep(xp, idx.n, table, rowid, cand, step)
            rowid, cand = rowid[keep], cand[keep]
        if count_only:
            return int(cand.shape[0])
        ncols = table.shape[1]
        out = xp.empty((cand.shape[0], ncols + 1), dtype=table.dtype)
        out[:, :ncols] = table.take(rowid, axis=0)
        out[:, ncols] = cand
        return out

    # ------------------------------------------------------------------ counting
    def trailing_totals(self, program: TrailingProgram, table: Any,
                        pairs: tuple[Any, Any] | None = None) -> TrailingTotals | None:
        """The completions of every row of ``table`` (core matches) under ``program`` in one fused pass (see
        :class:`~distsm.kernels.records.TrailingTotals`), or with ``pairs`` ``(parents, xs)`` of the matches
        ``table[parents[k]]`` followed by ``xs[k]`` (as :meth:`extend_pairs` gives them); None where the backend has
        no such pass for it: at array level the trailing count is
        :meth:`~distsm.kernels.trailing.TrailingCounter.count_arrays` itself."""
        return None

    def extend_rows(self, program: TrailingProgram, table: Any) -> Any | None:
        """``table`` with each row repeated once per extension under ``program`` (one extension, see
        :func:`~distsm.kernels.ce_join.fused_program`), the extension appended as a last column, rows sorted by
        row then vertex; None where the backend has no fused pass for it: at array level the core join extends
        through :func:`~distsm.kernels.ce_join.extension_set` itself."""
        return None

    def extend_pairs(self, program: TrailingProgram, table: Any) -> tuple[Any, Any] | None:
        """:meth:`extend_rows` as ``(parents, xs)`` (int32): the k-th extension is row ``parents[k]`` followed by
        ``xs[k]``, so the rows are not copied; None where the backend has no such pass."""
        return None


class NumpyBackend(ArrayBackend):
    """The CPU reference backend."""

    name = "numpy"
    # Gathers and scatters indexed by int32 arrays convert their indices on every call, which costs more than the
    # work on the light queries' small tables; the CPU's tables are budgeted at 8 bytes a column anyway.
    vertex_dtype: type[np.generic] = np.int64

    def __init__(self) -> None:
        super().__init__(np)
        self._take = np.ndarray.take  # the method itself: array_ops.take adds a Python call per take

    def _contains(self, keys: Any, queries: Any) -> Any:
        # Membership tests run once per check and level: the method calls and a clipped take cost half of what
        # the generic version's module functions and separate clamp do on small arrays.
        return keys.take(keys.searchsorted(queries), mode="clip") == queries


#: The one NumPy backend: :func:`distsm.kernels.get_backend` hands it out, and a device backend hands its host
#: work to it (identity matters: indexes are cached per backend).
NUMPY = NumpyBackend()
