"""The trailing count on the device as one fused pass (``kernels/cuda/trailing.cu``): no per-entry set is laid out;
and the core join's extensions by passes of the same module (:meth:`TrailingOps.extend_rows`).

:meth:`TrailingOps.trailing_totals` uploads a :class:`~distsm.kernels.records.TrailingProgram` (its words, and a
table of its arcs' device addresses; cached for the program's lifetime) and launches ``trailing_count`` over a
table of core matches: a thread per row, each block a contiguous range of rows reduced to one int64 total, one
float64 bound and one entry count.  The caller (:class:`~distsm.kernels.trailing.TrailingCounter`) keeps the ranges
whose bound shows the int64 sum exact and recounts the others with the array code.  Programs beyond the kernel's
fixed sizes (more than ``TRAILING_MAX_LINKS`` links, a label group of more than ``TRAILING_MAX_GROUP`` vertices, a
longer program) get None: the array code counts them.

Shape, from the numbers of the dense query heavy_16_0 (gMatch's data graph: 37,700 vertices, average degree 15; a
core of 10 vertices, 63M core rows, 6 trailing vertices): the array code read 3.0e9 set entries, about 48 per row,
writing each as (row, vertex) pairs and reading them back through sorts, searches and bincounts.  Runs are short (tens
of entries), so a thread per row walks each trailing vertex's first-link run once
and probes every entry in the other links' runs and the later same-label vertices' runs by binary search (runs are
sorted): per row about 20 entries walked times 3 probes of 4 steps, about 250 dependent 4-byte loads into a
candidate-edge index of a few MB that stays in L2, so 63M rows make about 1.5e10 L1/L2 loads, under 0.1 s at L2's
sector rate (about 1.7e11 32-byte sectors/s), and the table itself (63M x 10 x 4 bytes = 2.5 GB) reads in about
1 ms at 3 TB/s.  Nothing is written per row.  Bitmaps with popcounts would pay off only for runs of hundreds of
entries; rows with short runs would leave most of a warp idle in a warp-per-row shape.

``benchmarks/device_trailing.sh`` measures the fused count against the array code on the same tables.

Dense queries on graphs of many labels have small label groups: the union U of a group's candidates is often a few
hundred vertices, so a source candidate's run over it is a bit row of a few 8-byte words, and a row's set sizes and
intersections are ANDs and popcounts of its links' rows (``trailing_count_bits``, rows built per program by
``tr_bit_rows``).  :meth:`TrailingOps.trailing_totals` takes that pass where the rows read fewer words than the
runs' walk and probes would read entries (``distsm.gpu.trailing-bits``: ``auto``), estimated from the arcs' mean
run lengths, and where every arc's rows fit :data:`BIT_ROW_BYTES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.kernels.array_ops import cast, cumsum, subtract
from distsm.kernels.cupy.base import DeviceBase
from distsm.kernels.cuda_modules import (MAX_GRID, TRAILING_BLOCK, TRAILING_BLOCKS, TRAILING_MAX_GROUP,
                                         TRAILING_MAX_LINKS, TRAILING_PROG_MAX)
from distsm.kernels.cupy.launch import (CE_EXTEND_COUNT, CE_EXTEND_PAIRS, CE_GATHER_ROWS, TR_BIT_ROWS, TRAILING_COUNT,
                                        TRAILING_COUNT_BITS)
from distsm import caches
from distsm.kernels.records import TrailingProgram, TrailingTotals

#: Device bytes a program's bit rows may take in all (a row of words per source candidate per arc); past it the
#: runs are walked.
BIT_ROW_BYTES = 1 << 28
#: Entries a probe by binary search reads (as the planner's PROBE_COST weighs a probe against a read).
PROBE_STEPS = 4
#: Run entries (first links, as explain counts them) a count must be estimated to walk before its bit rows are built:
#: below it the build (one launch, two uploads) costs more than it saves.  Fitted on an H200 over gMatch's suite and
#: the four generated dense suites (benchmarks run trailing-bits; benchmarks/README.md has the figures).
BITS_MIN_ENTRIES = 2e7


@dataclass(frozen=True)
class BitShape:
    """What a program's bit rows would cost, from its arcs' sizes alone (nothing is read from the device):
    ``sources`` per arc slot its source's candidates, ``bytes`` the rows' size in all, ``words`` and ``reads`` a
    row's 8-byte words by bit rows and entries by walked runs and probes, ``walked`` the entries of its first links'
    runs.  A group's space is taken as the sum of its members' candidates (their union is at most that)."""

    sources: tuple[int, ...]
    bytes: int
    words: float
    reads: float
    walked: float

    @classmethod
    def of(cls, program: TrailingProgram) -> BitShape:
        sources = tuple(int(offsets.shape[0]) - 1 for offsets, _, _ in program.arcs)
        group_of = {t: g for g in program.groups for t in g}
        width = {g: -(-sum(int(program.targets[t].shape[0]) for t in g) // 64) for g in program.groups}
        mean = [int(values.shape[0]) / max(n, 1) for (_, values, _), n in zip(program.arcs, sources)]
        links = [[s for s, t in enumerate(program.arc_extension) if t == x] for x in range(len(program.targets))]
        reads = walked = 0.0
        for g in program.groups:
            for i, t in enumerate(g):
                probes = len(links[t]) - 1 + sum(len(links[u]) for u in g[i + 1:])
                walked += mean[links[t][0]]
                reads += mean[links[t][0]] * (1 + PROBE_STEPS * probes)
        return cls(sources, sum(n * width[group_of[t]] * 8 for n, t in zip(sources, program.arc_extension)),
                   float(sum(width[group_of[t]] for t in program.arc_extension)), reads, walked)

    def pays(self, rows: int) -> bool:
        """Whether bit rows are worth building for a count of ``rows`` core matches: a row reads fewer words than
        entries, and the runs' walk would be long enough to repay the build."""
        return self.words < self.reads and rows * self.walked >= BITS_MIN_ENTRIES


class TrailingOps(DeviceBase):
    """:meth:`trailing_totals` by the fused kernel (see the module docstring), also over the core's last level as
    ``(parents, xs)`` pairs (:meth:`extend_pairs`) that never copy a row."""

    def __init__(self) -> None:
        super().__init__()
        self._trailing_programs = caches.owned(self, "cupy trailing programs",
                                               "trailing program -> (words, arc table, arrays it points into)")
        self._bit_shapes = caches.owned(self, "cupy trailing bit shapes", "trailing program -> BitShape")
        self._bit_rows = caches.owned(self, "cupy trailing bit rows",
                                      "trailing program -> (bit table, arrays it points into)")

    def trailing_totals(self, program: TrailingProgram, table: Any,
                        pairs: tuple[Any, Any] | None = None) -> TrailingTotals | None:
        if program.links > TRAILING_MAX_LINKS or program.largest_group > TRAILING_MAX_GROUP or \
                program.words.shape[0] > TRAILING_PROG_MAX:
            return None
        words, arcs, _ = self._uploaded(program)
        xp = self.xp
        table = self._as_table(table)
        rows, ncols = int(table.shape[0] if pairs is None else pairs[0].shape[0]), int(table.shape[1])
        bits = self._bits(program, rows)
        per = -(-rows // max(1, min(-(-rows // TRAILING_BLOCK), TRAILING_BLOCKS)))
        blocks = -(-rows // per)
        totals = xp.empty(blocks, dtype=xp.int64)
        bounds = xp.empty(blocks, dtype=xp.float64)
        work = xp.empty(blocks, dtype=xp.int64)
        parents, xs = pairs if pairs is not None else (np.uint64(0), np.uint64(0))  # null: the table's own rows
        args = dict(table=table, ncols=ncols, parents=parents, xs=xs, nrows=rows, rows_per_block=per, prog=words,
                    arcs=arcs, narcs=len(program.arcs), block_total=totals, block_bound=bounds, block_work=work)
        if bits is None:
            self.kernels.launch(TRAILING_COUNT, blocks, TRAILING_BLOCK, **args)
        else:
            self.kernels.launch(TRAILING_COUNT_BITS, blocks, TRAILING_BLOCK, bits=bits[0], **args)
        cuts = np.minimum(np.arange(blocks + 1, dtype=np.int64) * per, rows)
        done = int(self.to_host(work).sum())
        return TrailingTotals(cuts, self.to_host(totals), self.to_host(bounds), 0 if bits else done,
                              done if bits else 0)

    def _bits(self, program: TrailingProgram, rows: int) -> tuple[Any, list[Any]] | None:
        """The bit table ``trailing_count_bits`` reads for ``program`` over ``rows`` core matches (per trailing
        vertex its space's sorted vertices, their number and the words of a row; per arc slot its rows) and the
        arrays it points into, or None where the runs are to be walked (see the module docstring).  Rows are built
        once per program, at the first count that takes them."""
        mode = self.options.trailing_bits
        if mode == "never" or not program.groups:
            return None
        shape = self._bit_shapes.get(program)
        if shape is None:
            shape = self._bit_shapes.put(program, BitShape.of(program))
        if shape.bytes > BIT_ROW_BYTES or (mode == "auto" and not shape.pays(rows)):
            return None
        return self._bit_rows.get_or(program, lambda: self._build_bits(program, shape))

    def _build_bits(self, program: TrailingProgram, shape: BitShape) -> tuple[Any, list[Any]]:
        xp = self.xp
        # A group's space: its one member's candidates, or the union of its members' (sorted on the host).
        spaces = {g: cast(xp.ascontiguousarray(program.targets[g[0]]), np.int32) if len(g) == 1 else
                  xp.asarray(np.unique(np.concatenate([self.to_host(program.targets[t]) for t in g])).astype(np.int32))
                  for g in program.groups}
        group_of = {t: g for g in program.groups for t in g}
        width = {g: -(-int(space.shape[0]) // 64) for g, space in spaces.items()}
        heights = [n * width[group_of[t]] for n, t in zip(shape.sources, program.arc_extension)]
        rows = xp.empty(max(sum(heights), 1), dtype=xp.uint64)
        starts = np.cumsum([0, *heights[:-1]]) * rows.itemsize + rows.data.ptr
        uploaded = self._uploaded(program)[2]
        table = [x for t in range(len(program.targets))
                 for x in (spaces[group_of[t]].data.ptr, int(spaces[group_of[t]].shape[0]), width[group_of[t]])]
        table += [int(a) for a in starts]
        desc = [x for slot, t in enumerate(program.arc_extension)
                for x in (uploaded[3 * slot].data.ptr, uploaded[3 * slot + 1].data.ptr, shape.sources[slot],
                          spaces[group_of[t]].data.ptr, int(spaces[group_of[t]].shape[0]), width[group_of[t]],
                          int(starts[slot]))]
        both = xp.asarray(np.asarray(table + desc, dtype=np.int64))
        per_arc = max(1, min(-(-max(shape.sources) // TRAILING_BLOCK), MAX_GRID // max(len(desc) // 7, 1)))
        self.kernels.launch(TR_BIT_ROWS, per_arc * len(program.arcs), TRAILING_BLOCK, desc=both[len(table):],
                            narcs=len(program.arcs), per_arc=per_arc)
        return both, [rows, *spaces.values()]

    def extend_rows(self, program: TrailingProgram, table: Any) -> Any | None:
        """The core join's extension of ``table`` by ``program``'s one vertex in three passes of ``trailing.cu``:
        :meth:`extend_pairs`, then ``ce_gather_rows`` lays out each extended row from its pair, a thread per output
        word.  Writing the rows straight from the thread that found them wrote one word per 32-byte sector, and an
        18-column core's level of 301M rows is 20 GB.  None past the kernel's fixed sizes."""
        pairs = self.extend_pairs(program, table)
        if pairs is None:
            return None
        parents, xs = pairs
        table = self._as_table(table)
        rows, ncols = int(parents.shape[0]), int(table.shape[1])
        out = self.xp.empty((rows, ncols + 1), dtype=self.xp.int32)
        if rows:
            self.kernels.grid(CE_GATHER_ROWS, rows * (ncols + 1), table=table, ncols=ncols, parents=parents, xs=xs,
                              nrows=rows, out=out)
        return out

    def extend_pairs(self, program: TrailingProgram, table: Any) -> tuple[Any, Any] | None:
        """The extensions of ``table`` by ``program``'s one vertex as ``(parents, xs)`` (row index and vertex, 8
        bytes where an extended row takes ``4 * (ncols + 1)``): ``ce_extend_count`` counts each row's, then
        ``ce_extend_pairs`` writes them from the rows' prefix sums (one synchronisation, for their number).  None
        past the kernel's fixed sizes."""
        counted = self._extensions(program, table) if table.shape[0] < 1 << 31 else None
        if counted is None:
            return None
        head, grid, counts, ends = counted
        total = int(ends[-1]) if counts.shape[0] else 0
        parents, xs = self.xp.empty(total, dtype=self.xp.int32), self.xp.empty(total, dtype=self.xp.int32)
        if total:
            self.kernels.launch(CE_EXTEND_PAIRS, grid, TRAILING_BLOCK, **head, starts=subtract(ends, counts),
                                parents=parents, xs=xs)
        return parents, xs

    def _extensions(self, program: TrailingProgram, table: Any) -> tuple[dict[str, Any], int, Any, Any] | None:
        """``ce_extend_count`` over ``table``: the launch's common arguments, its grid, each row's extensions and
        their running sums; None past the kernel's fixed sizes."""
        if program.links > TRAILING_MAX_LINKS or program.words.shape[0] > TRAILING_PROG_MAX:
            return None
        words, arcs, _ = self._uploaded(program)
        xp = self.xp
        table = self._as_table(table)
        rows = int(table.shape[0])
        grid = max(1, min(-(-rows // TRAILING_BLOCK), MAX_GRID))
        head = {"table": table, "ncols": int(table.shape[1]), "nrows": rows, "prog": words, "arcs": arcs,
                "narcs": len(program.arcs)}
        counts = xp.empty(rows, dtype=xp.int64)
        if rows:
            self.kernels.launch(CE_EXTEND_COUNT, grid, TRAILING_BLOCK, **head, counts=counts)
        return head, grid, counts, cumsum(counts)

    def _uploaded(self, program: TrailingProgram) -> tuple[Any, Any, list[Any]]:
        """``program``'s words on the device, and its arc table: per arc, the device addresses of its offsets
        (int64), values (int32) and lookup (int32), and the lookup's size (-1 for a position map); the arrays those
        addresses point into come third (converted where their dtypes differ, and kept alive with the table)."""
        ent = self._trailing_programs.get(program)
        if ent is None:
            xp = self.xp
            kept: list[Any] = []
            table: list[int] = []
            for offsets, values, lookup in program.arcs:
                arrays = [xp.ascontiguousarray(a, dtype=t) for a, t in ((offsets, xp.int64), (values, xp.int32),
                                                                       (lookup, xp.int32))]
                kept += arrays
                table += [a.data.ptr for a in arrays] + [-1 if program.positions else int(arrays[2].shape[0])]
            ent = self._trailing_programs.put(program, (xp.asarray(program.words),
                                                        xp.asarray(np.asarray(table, dtype=np.int64)), kept))
        return ent
