"""Batched counts on the device: many prepared light queries counted by one launch, one block per query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from distsm.kernels.budget import BudgetPlan
from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.cupy.descent import descent_words
from distsm.kernels.cupy.join import JoinOps, program_words
from distsm.kernels.cuda_modules import BATCH_BLOCK, BATCH_HEAD
from distsm.kernels.cupy.launch import DESCEND_BATCH

#: Blocks of BATCH_BLOCK threads one SM can hold (2048 threads on Hopper): a larger grid only waits for free SMs,
#: where each block would hold its own scratch tables; a block takes queries until none is left.
BATCH_BLOCKS_PER_SM = 2048 // BATCH_BLOCK


class BatchOps(JoinOps):
    """:meth:`count_prepared`: the fused descent (:mod:`.descent`) of many queries in one launch."""

    def count_prepared(self, prepared: Sequence[Any], allowance: Sequence[int],
                       budget: int | BudgetPlan) -> list[int | None]:
        """Counts of several prepared queries (``prepared.PreparedQuery``, all on one data index) by their general
        join, together; None for a query whose join would read more than ``allowance[i]`` adjacency entries or
        outgrow the batch's scratch tables (``distsm.gpu.small-limit`` rows a level, so also a first level of more
        candidates than that), or whose step program exceeds the kernel's shared memory; the caller counts those
        alone.

        One launch of ``descend_batch`` runs every query: a block takes one query at a time and runs all its
        levels (workload, extension with in-order compaction, the last level only counted), so a count is the
        number of complete rows, as ``walk(count_only=True)`` gives.  The queries' headers, level tables, step
        programs and bitset addresses travel in one upload and the results come back in one copy.  Plans that
        filter by partition (spanning searches) are refused with ValueError: they need the partition.  The scratch
        tables of the launch's blocks fit :meth:`~distsm.kernels.budget.BudgetPlan.batch_scratch` of ``budget``
        (fewer blocks run the batch where they would not)."""
        _check_batch(prepared, allowance)
        out: list[int | None] = [None] * len(prepared)
        if not prepared:
            return out
        idx = prepared[0].index
        rows = self.options.small_limit
        runs: list[tuple[int, int, int]] = []
        tables, addrs, desc_at, res_at = [], [], [], [0]
        desc: list[int] = []
        for i, (p, allow) in enumerate(zip(prepared, allowance)):
            first = p.candidates[p.plan.order[0]]
            if len(p.plan.order) == 1:  # no level to extend: every candidate is a match, nothing is read
                out[i] = int(first.shape[0])
                continue
            if first.shape[0] > rows:
                continue
            words = descent_words(p.plan, [program_words(step) for step in p.plan.steps])
            if words is None:
                continue
            runs.append((i, len(p.plan.order), int(allow)))
            tables.append(self._as_table(first))
            addrs.append(_bitset_addresses(p))
            desc_at.append(len(desc))
            desc += words
            res_at.append(res_at[-1] + 4 + 2 * len(p.plan.order))
        if not runs:
            return out
        head, progs_at = _pack(runs, tables, addrs, desc, desc_at, res_at)
        nq_max = max(nq for _, nq, _ in runs)
        grid = self._batch_grid(len(runs), rows, nq_max, BudgetPlan.of(budget).batch_scratch())
        xp = self.xp
        gidx = self.as_gpu_index(idx)
        res = xp.empty(res_at[-1], dtype=xp.int64)
        bufs = xp.empty(grid * 2 * rows * nq_max, dtype=xp.int32)
        work = xp.empty(grid * 2 * rows, dtype=xp.int64)
        self.kernels.launch(DESCEND_BATCH, grid, BATCH_BLOCK, head=xp.asarray(head), nqueries=len(runs),
                            progs_at=progs_at, rows=rows, table_words=rows * nq_max, bufs=bufs, work=work,
                            **gidx.probe_args, res=res)
        host = self.to_host(res)
        for (i, nq, _), at in zip(runs, res_at):
            if host[at] == nq:  # finished (the level reached); else stopped at that level
                out[i] = int(host[at + 1])
        return out

    def _batch_grid(self, queries: int, rows: int, nq_max: int, scratch: int) -> int:
        """Blocks of a batch launch: one per query, at most the resident blocks, and no more than ``scratch`` bytes
        hold scratch tables for (at least one)."""
        per_block = 2 * rows * (4 * nq_max + 8)
        fit = scratch // max(per_block, 1)
        return int(max(1, min(queries, BATCH_BLOCKS_PER_SM * self._sm_count(), fit)))


def _check_batch(prepared: Sequence[Any], allowance: Sequence[int]) -> None:
    """ValueError unless ``prepared`` has one allowance each, all on one index, and none is a spanning plan."""
    if len(prepared) != len(allowance):
        raise ValueError(f"{len(prepared)} prepared queries but {len(allowance)} allowances")
    if any(p.index is not prepared[0].index for p in prepared):
        raise ValueError("count_prepared counts queries prepared on one data index")
    if any(p.plan.needs_partition for p in prepared):
        raise ValueError("a spanning plan needs the partition: count it with walk")


def _bitset_addresses(prepared: Any) -> list[int]:
    """The device addresses of the membership bitsets the steps of ``prepared`` read, in step order: computed from
    the filter's bitset rows where the candidates carry them (no array object per row), else ``prepared.bits``."""
    sets = prepared.candidates
    if isinstance(sets, CandidateSets) and sets.rows is not None:
        base, stride = sets.rows.data.ptr, sets.rows.strides[0]
        return [base + step.vertex * stride for step in prepared.plan.steps]
    return [prepared.bits[step.vertex].data.ptr for step in prepared.plan.steps]


def _pack(runs: list[tuple[int, int, int]], tables: list[Any], addrs: list[list[int]], desc: list[int],
          desc_at: list[int], res_at: list[int]) -> tuple[np.ndarray, int]:
    """``descend_batch``'s ``head`` (int64) and the offset of its program words in it: the work counter, a header
    of ``BATCH_HEAD`` words per query (start table address, its rows, query size, offset ``desc_at`` of its level
    table and programs among the program words, offset of its bitset addresses in ``head``, offset ``res_at`` of
    its result, allowance), the bitset addresses, then the program words ``desc`` (int32, two to a word)."""
    q = len(runs)
    nsteps = np.asarray([nq - 1 for _, nq, _ in runs], dtype=np.int64)
    addrs_at = 1 + BATCH_HEAD * q
    progs_at = addrs_at + int(nsteps.sum())
    header = np.empty((q, BATCH_HEAD), dtype=np.int64)
    header[:, 0] = [t.data.ptr for t in tables]
    header[:, 1] = [t.shape[0] for t in tables]
    header[:, 2] = nsteps + 1
    header[:, 3] = desc_at
    header[:, 4] = addrs_at + np.cumsum(nsteps) - nsteps
    header[:, 5] = res_at[:q]
    header[:, 6] = [allow for _, _, allow in runs]
    words = np.zeros(progs_at + (len(desc) + 1) // 2, dtype=np.int64)
    words[1:addrs_at] = header.reshape(-1)
    words[addrs_at:progs_at] = np.asarray([a for row in addrs for a in row], dtype=np.uint64).view(np.int64)
    words[progs_at:].view(np.int32)[:len(desc)] = desc
    return words, progs_at
