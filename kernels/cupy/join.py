"""The level-by-level join on the device: step programs, workloads, the extend paths (fused single block,
entry-parallel, tiered by row workload)."""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from distsm.kernels.array_ops import bincount, count_true, cumsum
from distsm.kernels.cupy.index import IndexOps
from distsm.kernels.cuda_modules import BLOCK, MAX_GRID, PROG_MAX, TIER_CHECKS, TIER_COLS
from distsm.kernels.cupy.launch import (EXTEND_COUNT, EXTEND_FLAGS, EXTEND_SMALL, EXTEND_TIERED, EXTEND_WRITE,
                                        EXTEND_WRITE_ITEMS, WORKLOAD_COUNTS, WORKLOAD_DELTA, WORKLOAD_SMALL)
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import Step
from distsm.kernels.records import LevelExtension


def program_words(step: Step, spanning: Any = None) -> list[int]:
    """The step's checks as the kernels' step program (the layout at the top of ``join.cu``), with the spanning
    filter's words when ``spanning`` (a :class:`~distsm.kernels.records.Spanning`) is given."""
    # One list display: a batch builds thousands of programs on the host.
    gt, lt, distinct = step.greater_than, step.less_than, step.distinct_cols
    checks, pairs = step.checks, step.pair_checks
    prog = [0, len(gt), *gt, len(lt), *lt, len(distinct), *distinct, len(checks), *chain.from_iterable(checks),
            len(pairs), *chain.from_iterable(pairs)]
    if spanning is None:
        prog.append(0)
    else:
        prime = spanning.prime
        prog.extend((1, int(step.cross_first), int(step.first_col), int(step.require_spanning),
                     -1 if prime is None else int(prime.edge_index), int(bool(prime and prime.directed)),
                     len(step.dup_checks)))
        prog.extend(chain.from_iterable(step.dup_checks))
    prog[0] = len(prog)
    return prog


class JoinOps(IndexOps):
    """:meth:`workload` computes run bounds and the inclusive prefix sum on the device (``offsets`` stays there).
    :meth:`extend` is entry-parallel over the chunk ``[a, b)`` of the level's output space: a thread per output
    entry finds its row by binary search in ``offsets`` and runs every check of the step.  Survivors are
    compacted in entry order, so tables (and listings) are identical to the NumPy backend's, or only counted on
    the last level of a count.  Chunks of at most ``small-limit`` entries use fused single-block kernels (one
    launch, one host round trip); ``load-balance: tiered`` runs larger ones by workload tiers."""

    def _program(self, step: Step, device: bool, spanning: Any = None) -> Any:
        """The step's checks as int32 words (host array, or a device copy when ``device``); both are cached for
        the lifetime of ``step`` (a step is always run with, or always without, its spanning filter)."""
        ent = self._progs.get(step)
        if ent is None:
            ent = self._progs.put(step, [np.array(program_words(step, spanning), dtype=np.int32), None])
        if not device:
            return ent[0]
        if ent[1] is None:
            ent[1] = self.xp.asarray(ent[0])
        return ent[1]

    def workload(self, idx: DataIndex, table: Any, step: Step) -> tuple[Any, Any, int]:
        """``(delta, offsets, total)``: device int64 arrays (``offsets`` is the inclusive prefix sum) and the
        level's output size on the host (read from page-locked memory on the small path: no extra copy)."""
        xp = self.xp
        opts = self.options
        gidx = self.as_gpu_index(idx)
        table = self._as_table(table)
        nrows, ncols = int(table.shape[0]), int(table.shape[1])
        buf = xp.empty((2, nrows), dtype=xp.int64)
        offsets, delta = buf[0], buf[1]
        if nrows == 0:
            return delta, offsets, 0
        head = dict(table=table, ncols=ncols, nrows=nrows, first_col=step.first_col, label=step.first_label,
                    **gidx.run_args)
        if nrows <= opts.small_limit:
            if opts.pinned:
                _, _, ra, rv = self._stage().take()
                self.kernels.single(WORKLOAD_SMALL, **head, offsets=offsets, delta=delta, total=ra)
                self._sync()
                return delta, offsets, int(rv[0])
            res = xp.empty(1, dtype=xp.int64)
            self.kernels.single(WORKLOAD_SMALL, **head, offsets=offsets, delta=delta, total=res)
            return delta, offsets, int(self.to_host(res)[0])
        self.kernels.grid(WORKLOAD_COUNTS, nrows, **head, counts=offsets, starts=delta)
        offsets = cumsum(offsets)
        self.kernels.grid(WORKLOAD_DELTA, nrows, starts=delta, offsets=offsets, nrows=nrows)
        return delta, offsets, int(offsets[-1])

    def extend(self, idx: DataIndex, table: Any, ext: LevelExtension, a: int, b: int) -> Any:
        xp = self.xp
        step, offsets, count_only, spanning = ext.step, ext.offsets, ext.count_only, ext.spanning
        opts = self.options
        gidx = self.as_gpu_index(idx)
        # Spanning searches run their cross-edge / DUPREMOVE tests inside the probe, so counts never materialise.
        part = self._dummy(np.int32) if spanning is None else xp.ascontiguousarray(spanning.part, dtype=xp.int32)
        table = self._as_table(table)
        nrows, ncols = int(table.shape[0]), int(table.shape[1])
        m = int(b) - int(a)
        if m <= 0:
            return 0 if count_only else xp.zeros((0, ncols + 1), dtype=table.dtype)
        head = dict(table=table, ncols=ncols, offsets=offsets, nrows=nrows, delta=ext.delta, **gidx.probe_args,
                    bits=ext.bits, part=part)
        hprog = self._program(step, device=False, spanning=spanning)
        if m <= opts.small_limit and hprog.shape[0] <= PROG_MAX:
            return self._extend_small(head, ext, hprog, a, m)
        probe = dict(head, prog=self._program(step, device=True, spanning=spanning))
        tiered = (opts.load_balance == "tiered" and ncols <= TIER_COLS and len(step.checks) <= TIER_CHECKS)
        if count_only:
            counter = xp.zeros(1, dtype=xp.uint64)
            if tiered:
                self._extend_tiered(probe, offsets, nrows, a, b, counter)
            else:
                self.kernels.grid(EXTEND_COUNT, m, **probe, a=a, m=m, counter=counter)
            return int(self.to_host(counter)[0])
        cand = xp.empty(m, dtype=xp.int32)
        if tiered:
            item_out = self._extend_tiered(probe, offsets, nrows, a, b, None, cand)
            n_items = int(item_out.shape[0]) // 3
            scan = xp.cumsum(item_out[0::3])
            total = int(scan[-1]) if n_items else 0
            out = xp.empty((total, ncols + 1), dtype=xp.int32)
            if total:
                self.kernels.grid(EXTEND_WRITE_ITEMS, total, table=table, ncols=ncols, item_out=item_out, scan=scan,
                                  n_items=n_items, a=a, cand_out=cand, total=total, out=out)
            return out
        flags = xp.empty(m, dtype=xp.int32)
        self.kernels.grid(EXTEND_FLAGS, m, **probe, a=a, m=m, cand_out=cand, flags=flags)
        scan = cumsum(flags)
        del flags
        total = int(scan[-1])
        out = xp.empty((total, ncols + 1), dtype=xp.int32)
        if total:
            self.kernels.grid(EXTEND_WRITE, m, table=table, ncols=ncols, offsets=offsets, nrows=nrows, a=a, m=m,
                              cand_out=cand, scan=scan, out=out)
        return out

    def _extend_small(self, head: dict[str, Any], ext: LevelExtension, hprog: np.ndarray, a: int, m: int) -> Any:
        """:meth:`extend` of a few entries (``m``, at most ``small_limit``) by one block: the step's program
        ``hprog`` goes up through the pinned stage (or as its own upload), the count comes back with the rows."""
        xp, count_only = self.xp, ext.count_only
        out = xp.empty((1 if count_only else m, int(head["ncols"]) + 1), dtype=xp.int32)
        tail = dict(a=a, m=m, count_only=1 if count_only else 0, out=out)
        if self.options.pinned:
            pa, pv, ra, rv = self._stage().take()
            pv[:hprog.shape[0]] = hprog
            self.kernels.single(EXTEND_SMALL, **head, prog=pa, **tail, count=ra)
            self._sync()
            c = int(rv[0])
        else:
            res = xp.empty(1, dtype=xp.int64)
            self.kernels.single(EXTEND_SMALL, **head, prog=self._program(ext.step, True, ext.spanning), **tail,
                                count=res)
            c = int(self.to_host(res)[0])
        return c if count_only else out[:c]

    # ------------------------------------------------------------------ tiered load balance
    def tier_thresholds(self, widths: np.ndarray, total: int) -> tuple[int, int]:
        """``(warp_max, block_max)`` from a histogram of the rows' entry counts ``widths`` (host, > 0).

        A row of at most ``warp_max`` entries gets a warp: ``warp_max`` is twice the upper edge of the power-of-two
        bucket holding the 90th-percentile row, clamped to [64, 1024], so most rows take a warp at most 32 passes.
        A row above ``block_max`` is split into pieces of ``block_max`` entries, one block each: ``block_max`` is
        the fair share of one resident block (``total`` over 8 blocks per SM), at least 4 x ``warp_max``, so one
        huge row never holds the grid's tail.  Rows in between get a block."""
        return self._thresholds(np.bincount(np.floor(np.log2(widths)).astype(np.int64)), total)

    def _thresholds(self, buckets: np.ndarray, total: int) -> tuple[int, int]:
        """:meth:`tier_thresholds` from the log2 histogram (``buckets[j]`` rows of ``2**j`` to ``2**(j+1) - 1``)."""
        cum = np.cumsum(buckets)
        j90 = int(np.searchsorted(cum, 0.9 * cum[-1]))
        warp_max = int(min(max(2 ** (j90 + 2), 64), 1024))
        block_max = int(max(4 * warp_max, -(-total // (8 * self._sm_count()))))
        return warp_max, block_max

    def _tier_items(self, lo: Any, hi: Any, r0: int, warp_max: int, block_max: int) -> tuple[Any, Any]:
        """The tiered launch's work items over rows ``r0 + i`` holding entries ``[lo[i], hi[i])``: int64 rows of
        (row, first entry, end, first item) for the warp tier and for each block piece; counts the tiers in
        :attr:`tier_stats`.  Every row with entries takes one item, or ceil(width / block_max) above warp_max (a
        block-tier row: one; a split row: more).  Items are numbered in entry order: a row's first item follows
        all earlier rows'."""
        xp = self.xp
        width = hi - lo
        per_row = xp.where(width > warp_max, (width + (block_max - 1)) // block_max, (width > 0).astype(xp.int64))
        first = xp.cumsum(per_row) - per_row
        warp = xp.flatnonzero((width > 0) & (width <= warp_max))
        big = xp.flatnonzero(width > warp_max)
        # Item p of the block launch belongs to the big row whose piece range [cum - pieces, cum) holds p.
        pieces = per_row[big]
        cum = xp.cumsum(pieces)
        n_block, n_split_rows = (int(cum[-1]), count_true(pieces > 1)) if big.shape[0] else (0, 0)
        p = xp.arange(n_block, dtype=xp.int64)
        owner = xp.searchsorted(cum, p, side="right")
        row = big[owner]
        piece = p - (cum - pieces)[owner]
        start = lo[row] + piece * block_max
        block_items = xp.stack([row + r0, start, xp.minimum(start + block_max, hi[row]), first[row] + piece], axis=1)
        warp_items = xp.stack([warp + r0, lo[warp], hi[warp], first[warp]], axis=1)
        st = self.tier_stats
        st["launches"] = st.get("launches", 0) + 1
        st["warp_rows"] = st.get("warp_rows", 0) + int(warp.shape[0])
        st["block_rows"] = st.get("block_rows", 0) + int(big.shape[0]) - n_split_rows
        st["split_rows"] = st.get("split_rows", 0) + n_split_rows
        st["split_pieces"] = st.get("split_pieces", 0) + n_block - (int(big.shape[0]) - n_split_rows)
        return warp_items, block_items

    def _extend_tiered(self, probe: dict[str, Any], offsets: Any, nrows: int, a: int, b: int, counter: Any,
                       cand: Any = None) -> Any:
        """Entries [a, b) through :func:`extend_tiered`: rows bucketed by workload into warp, block and split tiers
        (thresholds from :meth:`tier_thresholds`).  Counts into ``counter`` (uint64), or with ``counter=None``
        compacts through the kernel's write cache: each item's survivors go to the front of its range of
        ``cand`` and the returned ``item_out`` (int64, 3 per item in entry order) holds (survivors, row, first
        entry).  The work items are built on the device: only the histogram and the item counts come to the
        host, never per-row arrays."""
        xp = self.xp
        r0, r1 = (int(x) for x in self.to_host(xp.searchsorted(offsets, xp.asarray([a, b - 1], dtype=xp.int64),
                                                                     side="right")))
        r1 += 1
        ends = offsets[r0:r1]
        starts = xp.empty_like(ends)
        starts[0] = offsets[r0 - 1] if r0 else 0
        starts[1:] = ends[:-1]
        lo, hi = xp.maximum(starts, a), xp.minimum(ends, b)
        width = hi - lo
        limits = self.options.tier_limits
        if limits:
            warp_max, block_max = limits
        else:
            live = width[width > 0].astype(xp.float64)
            # Widths are below 2**63: 64 buckets hold every log2.
            warp_max, block_max = self._thresholds(self.to_host(bincount(xp.floor(xp.log2(live)).astype(xp.int64), 64)),
                                                   b - a)
        warp_items, block_items = self._tier_items(lo, hi, r0, warp_max, block_max)
        mode = 0 if counter is not None else 1
        n_items = int(warp_items.shape[0]) + int(block_items.shape[0])
        item_out = xp.empty(3 * n_items, dtype=xp.int64) if mode else self._dummy(np.int64)
        for items, group in ((warp_items, 32), (block_items, BLOCK)):
            count = int(items.shape[0])
            if count == 0:
                continue
            dev = xp.ascontiguousarray(items.astype(xp.int64, copy=False))
            per_block = BLOCK // group
            grid = max(1, min(-(-count // per_block), MAX_GRID))
            self.kernels.launch(EXTEND_TIERED, grid, BLOCK, **probe, items=dev, count=count, group=group, a=a,
                                mode=mode, counter=self._dummy(np.uint64) if counter is None else counter,
                                cand_out=self._dummy(np.int32) if cand is None else cand, item_out=item_out)
        return item_out if mode else None
