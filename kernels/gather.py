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

    Args:
        backend: the engine backend whose device receives the pieces.
        host: the whole graph's index with NumPy arrays (e.g. ``PartitionStore.adjacency_index(mmap=True)``).
        limit: device bytes one gathered piece may take (a piece of a single row may exceed it).
    """

    def __init__(self, backend: Any, host: DataIndex, limit: int):
        if not isinstance(host.nbr, np.ndarray):
            raise TypeError("HostAdjacency needs an index with host (NumPy) arrays")
        self.backend = backend
        self.host = host
        self.limit = max(int(limit), 1)
        self.stats = GatherStats()
        self.core = backend.adopt_index(_core(backend.xp, host))
        self._degrees = np.asarray(host.degrees)

    def pieces(self, table: Any, step: Step) -> Iterator[tuple[Any, DataIndex]]:
        """Yield ``(rows of table, index)`` pairs that cover ``table`` in order; each index holds the adjacency
        of every vertex the step reads for its rows.  Rows whose vertices have no adjacency at all are dropped
        (their first-edge runs are empty, so they extend to nothing)."""
        xp = self.backend.xp
        cols = step_columns(step)
        needed = np.unique(self.backend.to_host(table[:, cols]).astype(np.int64))
        entries = int(self._degrees[needed].sum())
        size = entries * ENTRY_BYTES + needed.shape[0] * RUN_BYTES
        if size > self.limit and table.shape[0] > 1:
            self.stats.splits += 1
            half = table.shape[0] // 2
            yield from self.pieces(table[:half], step)
            yield from self.pieces(table[half:], step)
            return
        if entries == 0:
            return
        yield table, self._gather(needed, bool(step.pair_checks), xp)

    def _gather(self, rows: np.ndarray, with_pairs: bool, xp: Any) -> DataIndex:
        h = self.host
        n, L = h.n, h.num_labels
        ip = h.indptr
        starts = np.asarray(ip[rows], np.int64)
        lengths = np.asarray(ip[rows + 1], np.int64) - starts
        new_starts = np.cumsum(lengths) - lengths
        pos = _ranges(starts, lengths)
        nbr = np.asarray(h.nbr[pos])
        host_arrays: dict[str, np.ndarray] = {"nbr": nbr}
        if L == 1:
            entry_keys = np.repeat(rows, lengths) * n + nbr
        else:
            r0 = np.searchsorted(h.run_keys, rows * L)
            r1 = np.searchsorted(h.run_keys, (rows + 1) * L)
            rpos = _ranges(r0, r1 - r0)
            shift = np.repeat(new_starts - starts, r1 - r0)
            run_start = np.asarray(h.run_start[rpos]) + shift
            run_end = np.asarray(h.run_end[rpos]) + shift
            rid = np.repeat(np.arange(rpos.shape[0], dtype=np.int64), run_end - run_start)
            entry_keys = rid * n + nbr
            host_arrays.update(run_keys=np.asarray(h.run_keys[rpos]), run_start=run_start, run_end=run_end)
            if with_pairs:
                host_arrays["pair_keys"] = np.asarray(h.pair_keys[pos])
        host_arrays["entry_keys"] = entry_keys
        host_arrays["rows"] = rows
        host_arrays["lengths"] = lengths
        dev = {k: xp.asarray(v) for k, v in host_arrays.items()}
        moved = sum(int(v.nbytes) for v in host_arrays.values())
        indptr = xp.zeros(n + 1, dtype=xp.int64)
        indptr[dev.pop("rows") + 1] = dev.pop("lengths")
        indptr = xp.cumsum(indptr)
        if L == 1:
            dev.update(run_start=indptr[:-1], run_end=indptr[1:])
        # Pair keys are read by induced pair checks only; other steps never touch them.
        dev.setdefault("pair_keys", dev["entry_keys"])
        piece = self.backend.with_adjacency(self.core, indptr=indptr, **dev)
        st = self.stats
        st.gathers += 1
        st.rows += int(rows.shape[0])
        st.entries += int(pos.shape[0])
        st.bytes_h2d += moved
        st.peak_piece_bytes = max(st.peak_piece_bytes, moved)
        return piece


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
