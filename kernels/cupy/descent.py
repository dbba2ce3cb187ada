"""The fused descent: one single-block launch runs every following level of a join while each fits one block."""

from __future__ import annotations

from typing import Any

import numpy as np

from distsm.kernels.records import Descent
from distsm.kernels.cupy.join import JoinOps, program_words
from distsm.kernels.cuda_modules import PROG_MAX
from distsm.kernels.cupy.launch import DESCEND_SMALL
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import QueryPlan

DESCENT_RESULT_WORDS = PROG_MAX // 2   # int64 words of descend_small's result (a staging slot's program area)


def descent_words(plan: QueryPlan, progs: list[list[int]]) -> list[int] | None:
    """The descent kernels' level table and step programs of ``plan`` (``desc`` in ``join.cu``); ``progs`` are the
    steps' programs (:func:`~.join.program_words`) in order.  None when a program is longer than the kernels'
    shared memory holds (``PROG_MAX`` words)."""
    head: list[int] = []
    body: list[int] = []
    at = 4 * len(progs)
    for j, (step, p) in enumerate(zip(plan.steps, progs)):
        if len(p) > PROG_MAX:
            return None
        head += (step.first_col, step.first_label, at, j)
        at += len(p)
        body += p
    return head + body


class DescentOps(JoinOps):
    """:meth:`descend` runs the HPRD queries end to end in one launch, and hands a level too large to fuse back to
    the level-by-level path with its workload already computed."""

    def descend(self, idx: DataIndex, table: Any, level: int, plan: QueryPlan, bits: list[Any], count_only: bool,
                cap: int, spanning: Any = None) -> Descent | None:
        """The fused descent (``descend_small``: one block, one launch, one host round trip for every level whose
        output space fits ``min(cap, descend-limit)`` entries); None when the table or a step program is too large.

        Its limit is above ``small-limit``: a level that leaves the descent costs two host round trips and a few
        launches, more than one block takes to read a few tens of thousands of entries (measurements:
        benchmarks/README.md, 'Measurements behind the engine's settings')."""
        xp = self.xp
        opts = self.options
        nq = len(plan.order)
        cap = min(int(cap), opts.descend_limit)
        nrows = int(table.shape[0])
        if not opts.fuse_levels or cap <= 0 or nrows > cap or 4 + 2 * nq > DESCENT_RESULT_WORDS:
            return None
        desc = self._descent_program(plan, bits, spanning)
        if desc is None:
            return None
        prog, bits_list = desc
        gidx = self.as_gpu_index(idx)
        table = self._as_table(table)
        part = self._dummy(np.int32) if spanning is None else xp.ascontiguousarray(spanning.part, dtype=xp.int32)
        bufs = xp.empty((2, cap * nq), dtype=xp.int32)
        work = xp.empty((2, cap), dtype=xp.int64)
        offsets, delta = work[0], work[1]
        words = 4 + 2 * nq
        head = dict(table0=table, nrows0=nrows, level0=level, nq=nq, desc=prog, bits_list=bits_list,
                    count_only=1 if count_only else 0, cap=cap, buf0=bufs[0], buf1=bufs[1], offsets=offsets,
                    delta=delta, **gidx.probe_args, part=part)
        if opts.pinned:
            pa, pv, _, _ = self._stage().take()
            rv = pv.view(np.int64)[:words]
            rv[:] = 0
            self.kernels.single(DESCEND_SMALL, **head, res=pa)
            self._sync()
            res = rv.copy()
        else:
            dres = xp.zeros(words, dtype=xp.int64)
            self.kernels.single(DESCEND_SMALL, **head, res=dres)
            res = self.to_host(dres)
        reached, rows = int(res[0]), int(res[1])
        levels = [(int(res[4 + 2 * j]), int(res[5 + 2 * j])) for j in range(level, reached)]
        source = (table, bufs[0], bufs[1])[int(res[3])]
        if reached == nq:
            out = None if count_only else source[:rows * nq].reshape(rows, nq)
            return Descent(nq, out, rows, None, levels)
        at = table if reached == level else source[:rows * reached].reshape(rows, reached)
        return Descent(reached, at, 0, (delta[:rows], offsets[:rows], int(res[2])), levels)

    def _descent_program(self, plan: QueryPlan, bits: list[Any], spanning: Any) -> tuple[Any, Any] | None:
        """``descend_small``'s level table and programs, and the device addresses of the steps' bitsets, on the
        device; cached for the lifetime of ``plan`` (while its bitsets are the same objects).  None when a step
        program is too long for shared memory."""
        key = tuple(id(bits[step.vertex]) for step in plan.steps)
        ent = self._descents.get(plan)
        if ent is not None and ent[0] == key:
            return ent[2]
        words = descent_words(plan, [program_words(step, spanning) for step in plan.steps])
        if words is None:
            return None
        held = [bits[step.vertex] for step in plan.steps]
        addrs = np.asarray([b.data.ptr for b in held], dtype=np.uint64)
        # One copy for both: each copy of host arrays is a sizeable part of a light device join.
        value = tuple(self.upload([np.asarray(words, dtype=np.int32), addrs]))
        # The bitsets are held with their addresses: an id in the key is never reused while the entry lives.
        self._descents.put(plan, (key, held, value))
        return value
