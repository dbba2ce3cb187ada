"""Adjacency kept in host memory and gathered onto the device table chunk by table chunk (out-of-core search).

When the whole graph does not fit the device budget, inter-partition search cannot keep the graph's
:class:`~distsm.kernels.index.DataIndex` resident.  PBE's answer (LOADSUBGRAPHTOGPU, PBE §5.2) is to collect, per
level, the adjacency lists of the data vertices the level reads, pack them into contiguous arrays and ship them in
one batch.  :class:`HostAdjacency` does exactly that for the engine:

* a *core* index stays on the device: the O(|V|) arrays the filter and the bitsets need (labels, degrees,
  signatures, vertices by label) and no adjacency at all;
* for each table chunk and step, :meth:`HostAdjacency.pieces` gathers the runs of the vertices in the columns the
  step reads (its first edge, membership checks and induced pair checks) from the host index, which may be
  memory-mapped, and returns an index over the same global ids in which only those rows have adjacency.  Lookups of
  the step never leave the gathered rows, so the join's answer is the resident index's answer.

A chunk whose gathered adjacency would exceed the gather limit is split in halves (a single row always goes
through), so device memory stays bounded by the limit plus the core.  ``stats`` counts gathers and the bytes moved
host to device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.kernels.backend import Backend
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import Step

#: Device bytes per gathered adjacency entry (neighbour, entry key, pair key) and per gathered run
#: (key, start, end, and the backend's hash slots), used to size pieces before they are built.
ENTRY_BYTES = 20
RUN_BYTES = 56


@dataclass
class GatherStats:
    gathers: int = 0          # pieces built
    rows: int = 0             # data vertices whose adjacency was gathered
    entries: int = 0          # adjacency entries gathered
    bytes_h2d: int = 0        # bytes copied host -> device
    splits: int = 0           # table chunks split because their adjacency exceeded the limit
    peak_piece_bytes: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[i], starts[i] + lengths[i])`` over ``i`` (int64)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def step_columns(step: Step) -> list[int]:
    """Table columns whose vertices' adjacency ``step`` reads."""
    cols = {step.first_col}
    cols.update(c for c, _ in step.checks)
    cols.update(c for c, _ in step.pair_checks)
    return sorted(cols)


class HostAdjacency:
    """A host :class:`DataIndex` served to the engine in gathered pieces (see the module docstring).

    The adjacency of the highest-degree vertices is cached on the device (up to ``cache`` bytes) and joined to
    every piece by a device-side copy: on power-law graphs those few rows are read by almost every chunk, and
    gathering them again per chunk would move the same bytes across the bus many times.

    Args:
        backend: the engine backend whose device receives the pieces.
        host: the whole graph's index with NumPy arrays (e.g. ``PartitionStore.adjacency_index(mmap=True)``).
        limit: device bytes one gathered piece may take (a piece of a single row may exceed it).
        cache: device bytes of the resident high-degree rows (0: none).
    """

    def __init__(self, backend: Backend, host: DataIndex, limit: int, cache: int = 0):
        if not isinstance(host.nbr, np.ndarray):
            raise TypeError("HostAdjacency needs an index with host (NumPy) arrays")
        self.backend = backend
        self.host = host
        self.limit = max(int(limit), 1)
        self.stats = GatherStats()
        self.core = backend.adopt_index(_core(backend.xp, host))
        self._degrees = np.asarray(host.degrees)
        self._cached = np.zeros(host.n, dtype=bool)
        self._cache: dict[str, Any] | None = None
        self.set_cache(cache)

    def set_cache(self, nbytes: int) -> None:
        """Keep the adjacency of the highest-degree vertices resident, up to ``nbytes`` device bytes."""
        deg = self._degrees
        order = np.argsort(-deg, kind="stable")
        fits = np.cumsum(deg[order] * ENTRY_BYTES + RUN_BYTES) <= nbytes
        rows = np.sort(order[fits & (deg[order] > 0)]).astype(np.int64)
        self._cached[:] = False
        self._cached[rows] = True
        self._cache = None
        if rows.shape[0]:
            seg = self._segments(rows, True)
            self._cache = {k: self.backend.xp.asarray(v) for k, v in seg.items()}
            self._cache["rows_host"], self._cache["len_host"] = rows, seg["lengths"]
            self._cache["runs_host"] = seg.get("run_lengths")
        self.cache_rows = int(rows.shape[0])
        self.cache_bytes = 0 if self._cache is None else sum(
            int(v.nbytes) for k, v in self._cache.items() if not k.endswith("_host"))

    def pieces(self, table: Any, step: Step) -> Iterator[tuple[Any, DataIndex]]:
        """Yield ``(rows of table, index)`` pairs that cover ``table`` in order; each index holds the adjacency
        of every vertex the step reads for its rows.  Rows whose vertices have no adjacency at all are dropped
        (their first-edge runs are empty, so they extend to nothing)."""
        cols = step_columns(step)
        needed = np.unique(self.backend.to_host(table[:, cols]).astype(np.int64))
        fresh = needed[~self._cached[needed]]
        entries = int(self._degrees[fresh].sum())
        size = entries * ENTRY_BYTES + fresh.shape[0] * RUN_BYTES
        if size > self.limit and table.shape[0] > 1:
            self.stats.splits += 1
            half = table.shape[0] // 2
            yield from self.pieces(table[:half], step)
            yield from self.pieces(table[half:], step)
            return
        if int(self._degrees[needed].sum()) == 0:
            return
        yield table, self._gather(fresh, bool(step.pair_checks))

    def _segments(self, rows: np.ndarray, with_pairs: bool) -> dict[str, np.ndarray]:
        """Host arrays of the adjacency of ``rows`` (sorted): entries row by row, and with several labels the
        runs row by row (keys and lengths)."""
        h = self.host
        L = h.num_labels
        starts = np.asarray(h.indptr[rows], np.int64)
        lengths = np.asarray(h.indptr[rows + 1], np.int64) - starts
        pos = _ranges(starts, lengths)
        out = {"nbr": np.asarray(h.nbr[pos]), "lengths": lengths}
        if L > 1:
            r0 = np.searchsorted(h.run_keys, rows * L)
            r1 = np.searchsorted(h.run_keys, (rows + 1) * L)
            rpos = _ranges(r0, r1 - r0)
            out["run_keys"] = np.asarray(h.run_keys[rpos])
            out["run_len"] = np.asarray(h.run_end[rpos]) - np.asarray(h.run_start[rpos])
            out["run_lengths"] = r1 - r0
            if with_pairs:
                out["pair_keys"] = np.asarray(h.pair_keys[pos])
        return out

    def _gather(self, fresh: np.ndarray, with_pairs: bool) -> DataIndex:
        """The piece holding the adjacency of ``fresh`` (copied from the host) and of the cached rows."""
        xp = self.backend.xp
        h = self.host
        n, L = h.n, h.num_labels
        seg = self._segments(fresh, with_pairs)
        moved = sum(int(v.nbytes) for k, v in seg.items() if k not in ("lengths", "run_lengths"))
        fresh_dev = {k: xp.asarray(v) for k, v in seg.items() if k not in ("lengths", "run_lengths")}
        rows, lengths, run_lengths = fresh, seg["lengths"], seg.get("run_lengths")
        c = self._cache
        if c is not None:
            # Cached rows first in the buffers, then the fresh ones; pieces list rows in ascending order.
            rows = np.concatenate([c["rows_host"], fresh])
            order = np.argsort(rows, kind="stable")
            lengths = np.concatenate([c["len_host"], lengths])
            run_lengths = None if L == 1 else np.concatenate([c["runs_host"], run_lengths])
            names = [k for k in fresh_dev if k != "pair_keys" or with_pairs]
            buf = {k: xp.concatenate([c[k], fresh_dev[k]]) for k in names}
            entry_pos = _device_ranges(xp, _starts(lengths)[order], lengths[order])
            for k in ("nbr", "pair_keys"):
                if k in buf:
                    buf[k] = buf[k][entry_pos]
            if L > 1:
                assert run_lengths is not None  # segments carry run lengths whenever there are several labels
                run_pos = _device_ranges(xp, _starts(run_lengths)[order], run_lengths[order])
                buf["run_keys"], buf["run_len"] = buf["run_keys"][run_pos], buf["run_len"][run_pos]
                run_lengths = run_lengths[order]
            rows, lengths = rows[order], lengths[order]
            fresh_dev = buf
        nbr = fresh_dev["nbr"]
        dev: dict[str, Any] = {"nbr": nbr}
        rows_dev = xp.asarray(rows)
        if L == 1:
            entry_keys = rows_dev[_device_segment_of(xp, lengths, int(nbr.shape[0]))] * n + nbr
        else:
            run_len = fresh_dev["run_len"]
            run_end = xp.cumsum(run_len)
            run_start = run_end - run_len
            rid = xp.searchsorted(run_end, xp.arange(int(nbr.shape[0]), dtype=xp.int64), side="right")
            entry_keys = rid * n + nbr
            dev.update(run_keys=fresh_dev["run_keys"], run_start=run_start, run_end=run_end)
            if with_pairs:
                dev["pair_keys"] = fresh_dev["pair_keys"]
        dev["entry_keys"] = entry_keys
        indptr = xp.zeros(n + 1, dtype=xp.int64)
        indptr[rows_dev + 1] = xp.asarray(lengths)
        indptr = xp.cumsum(indptr)
        moved += int(rows.nbytes + lengths.nbytes)
        if L == 1:
            dev.update(run_start=indptr[:-1], run_end=indptr[1:])
        # Pair keys are read by induced pair checks only; other steps never touch them.
        dev.setdefault("pair_keys", dev["entry_keys"])
        piece = self.backend.with_adjacency(self.core, indptr=indptr, **dev)
        st = self.stats
        st.gathers += 1
        st.rows += int(fresh.shape[0])
        st.entries += int(seg["nbr"].shape[0])
        st.bytes_h2d += moved
        st.peak_piece_bytes = max(st.peak_piece_bytes, moved)
        return piece


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def _device_segment_of(xp: Any, lengths: np.ndarray, total: int) -> Any:
    """Segment index of every position 0..total-1 of consecutive segments of ``lengths`` (on ``xp``)."""
    ends = xp.asarray(np.cumsum(lengths))
    return xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right")


def _device_ranges(xp: Any, starts: np.ndarray, lengths: np.ndarray) -> Any:
    """:func:`_ranges` computed on ``xp``'s device (only the per-segment arrays cross the bus)."""
    total = int(lengths.sum())
    seg = _device_segment_of(xp, lengths, total)
    new_starts = xp.asarray(_starts(lengths))
    return xp.asarray(starts)[seg] + xp.arange(total, dtype=xp.int64) - new_starts[seg]


def _core(xp: Any, host: DataIndex) -> DataIndex:
    """The O(|V|) part of ``host`` on ``xp``'s device, with empty adjacency."""
    n = host.n
    empty64 = xp.zeros(0, dtype=xp.int64)
    indptr = xp.zeros(n + 1, dtype=xp.int64)
    arrays = dict(vertex_labels=xp.asarray(host.vertex_labels), degrees=xp.asarray(host.degrees),
                  sig=xp.asarray(host.sig))
    by_label = {k: xp.asarray(v) for k, v in host.vertices_by_label.items()}
    nbytes = sum(int(v.nbytes) for v in arrays.values()) + int(indptr.nbytes) + n * 4
    if host.num_labels == 1:
        runs = dict(run_keys=None, run_start=indptr[:-1], run_end=indptr[1:])
    else:
        runs = dict(run_keys=empty64, run_start=empty64, run_end=empty64)
    return DataIndex(n=n, num_labels=host.num_labels, nbr=xp.zeros(0, dtype=xp.int32), indptr=indptr,
                     entry_keys=empty64, pair_keys=empty64, label_entries=dict(host.label_entries),
                     vertices_by_label=by_label, nbytes=nbytes, **arrays, **runs)
