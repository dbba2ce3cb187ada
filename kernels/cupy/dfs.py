"""The depth-first set-intersection search on the device (``kernels/cuda/dfs.cu``; the program's semantics are
:mod:`distsm.kernels.dfs_plan`'s, the reference is :mod:`distsm.kernels.dfs_host`).

One launch of ``dfs_tasks`` finds each level-0 vertex's tasks (its first-edge run, cut by the first two levels'
bound), a prefix sum numbers them, and one launch of ``dfs_count`` runs them all: warps take :data:`DFS_GRAB`
tasks per atomic, so a hub's long task holds one warp while the others go on.  Each warp owns one buffer per
stored level, as long as the graph's longest run; the grid is cut so that the buffers stay within the budget.
The tasks go in ranges of :data:`DFS_TASK_RANGE`, one launch each, between which ``control`` may cancel.
A clique program (:attr:`~distsm.kernels.dfs_plan.DfsProgram.clique`) runs ``clique_count`` instead, which counts
below level 2 by bit rows of ``C_2`` (each warp also owns rows for sets up to :func:`_bitmap_max` members).
"""

from __future__ import annotations


from typing import Any

import numpy as np

from distsm import caches
from distsm.kernels import array_ops as ops
from distsm.kernels import dfs_host
from distsm.kernels.cupy.base import DeviceBase
from distsm.kernels.cuda_modules import DFS_BLOCK, DFS_TASK_RANGE, MAX_GRID
from distsm.kernels.cupy.launch import CLIQUE_COUNT, DFS_COUNT, DFS_TASKS, Kernel
from distsm.kernels.dfs_plan import DfsProgram
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.records import Control

#: Task definitions whose tasks a ranked graph keeps (:meth:`DfsOps._tasks`); their bytes count against each
#: search's budget.
TASK_SETS_KEPT = 4
_TASKS = caches.cache("search tasks", "RankedGraph, task definition -> (level-0 vertices, task starts, task_ptr, "
                                      "tasks), or () where there are none", kept=TASK_SETS_KEPT)

REGISTERS_PER_SM = 65536  # every architecture CuPy 14 supports (sm_50 to sm_120)

#: The largest set ``C_2`` of a clique whose bit rows a warp keeps (``clique_count``): up to this, the levels
#: below level 2 are ANDs and popcounts; past it, or where the budget leaves no room for the rows, the general
#: search takes the task.
CLIQUE_BITMAP_MAX = 1024


def _row_bytes(bmax: int) -> int:
    """Bytes of one warp's bit rows for sets of up to ``bmax`` members (none at 32 or below: shared memory)."""
    return bmax * -(-bmax // 32) * 4 if bmax > 32 else 0


def _bitmap_max(room: int) -> int:
    """The largest power of two up to :data:`CLIQUE_BITMAP_MAX` whose rows fit in ``room`` bytes a warp, or 32."""
    bmax = CLIQUE_BITMAP_MAX
    while bmax > 32 and _row_bytes(bmax) > room:
        bmax //= 2
    return max(bmax, 32)


class DfsOps(DeviceBase):
    """:meth:`dfs_count` by the kernels of ``dfs.cu``."""

    def dfs_count(self, g: RankedGraph, prog: DfsProgram, budget: int, control: Control | None = None,
                  tasks: tuple[int, int] | None = None) -> int:
        return self._search(g, prog, budget, control, tasks, None)

    def dfs_weigh(self, g: RankedGraph, prog: DfsProgram, weights: Any, budget: int,
                  tasks: tuple[int, int] | None = None) -> int:
        """A triangle's weights by ``clique_count``; any other program's by the host search's tables, on the
        device (:mod:`distsm.kernels.dfs_host`)."""
        if prog.clique and prog.levels == 3:
            return self._search(g, prog, budget, None, tasks, weights)
        return dfs_host.count(self.xp, g, prog, budget, None, tasks, weights)

    def _search(self, g: RankedGraph, prog: DfsProgram, budget: int, control: Control | None,
                tasks: tuple[int, int] | None, weights: Any | None) -> int:
        xp = self.xp
        words = xp.asarray(prog.words)
        found = self._tasks(g, prog, words)
        if found is None:
            return 0
        verts, start, task_ptr, total = found
        budget -= sum(int(a.nbytes) for a in found[:3])
        nv = int(verts.shape[0])
        first, last = tasks if tasks is not None else (0, total)
        ntasks = last - first
        if ntasks <= 0:
            return 0
        kernel = CLIQUE_COUNT if prog.clique else DFS_COUNT
        slots = max(prog.levels - 2, 1)
        cap = max(g.max_run, 1)
        warps = DFS_BLOCK // 32
        resident = self._sm_count() * self._resident_blocks(kernel)
        bmax = _bitmap_max(budget // (resident * warps) - slots * cap * 4) if kernel is CLIQUE_COUNT else 0
        warp_bytes = slots * cap * 4 + _row_bytes(bmax)
        blocks = min(resident, -(-ntasks // warps), max(1, budget // (warp_bytes * warps)))
        bufs = xp.empty(blocks * warps * slots * cap if prog.levels > 2 else 1, dtype=xp.int32)
        extra = {}
        if kernel is CLIQUE_COUNT:
            extra = {"rows": xp.empty(max(blocks * warps * _row_bytes(bmax) // 4, 1), dtype=xp.uint32),
                     "bmax": max(bmax, 32), "weight": np.uint64(0) if weights is None else weights}
        result = xp.zeros(1, dtype=xp.uint64)
        nxt = xp.zeros(1, dtype=xp.int64)
        # Launches over ranges of tasks, so that a cancelled count stops within one range (``next`` starts each
        # range's task counter; its end is the kernel's ``ntasks``).
        for lo in range(first, last, DFS_TASK_RANGE):
            hi = min(lo + DFS_TASK_RANGE, last)
            if lo:  # a copy, not fill(): fill compiles an elementwise kernel on first use
                nxt.set(np.asarray([lo], dtype=np.int64))
            self.kernels.launch(kernel, blocks, DFS_BLOCK, words=words, nbr=g.nbr, ptr=g.ptr, up=g.up,
                                vlab=g.vertex_labels, L=g.labels, verts=verts, task_ptr=task_ptr, task_start=start,
                                nv=nv, ntasks=hi, bufs=bufs, cap=cap, next=nxt, result=result, **extra)
            if control is not None and hi < last:
                self._sync()
                control.check()
                if control.progress is not None:
                    control.progress(hi - first, ntasks)
        return int(np.uint64(result.get()[0]))

    def _tasks(self, g: RankedGraph, prog: DfsProgram, words: Any) -> tuple[Any, Any, Any, int] | None:
        """The level-0 vertices that have tasks of ``prog``, where each one's tasks start in its first-edge run, the
        running task count (``task_ptr``, from 0) and the number of tasks; None where there are none.  Kept
        per ranked graph for the last :data:`TASK_SETS_KEPT` task definitions (level 0's label, the first edge's
        run and level 1's bound), so that a repeated count launches and synchronises for none of it."""
        level1 = prog.level(1)
        key = (int(prog.level(0)[0]), int(prog.words[3]), int(level1[2]) & 1, int(level1[3]) & 1)
        found = _TASKS.get_or(g, lambda: self._list_tasks(g, key, words), key)
        return found or None

    def _list_tasks(self, g: RankedGraph, key: tuple[int, int, int, int], words: Any) -> tuple[Any, ...]:
        """:meth:`_tasks` of the task definition ``key``, listed by ``dfs_tasks`` (``()`` where there are none)."""
        xp = self.xp
        verts = ops.arange_like(g.nbr, g.n, dtype=np.int32) if key[0] < 0 else \
            ops.cast(ops.positions_of(g.vertex_labels, key[0]), np.int32)
        nv = int(verts.shape[0])
        if not nv:
            return ()
        start, count = xp.empty(nv, dtype=xp.int64), xp.empty(nv, dtype=xp.int64)
        self.kernels.launch(DFS_TASKS, max(1, min(-(-nv // DFS_BLOCK), MAX_GRID)), DFS_BLOCK, prog=words,
                            verts=verts, nv=nv, ptr=g.ptr, up=g.up, L=g.labels, start=start, count=count)
        # Only vertices with tasks are kept: the kernel finds a grab's rows among the 32 after its first.
        keep = ops.flatnonzero(count)
        if not keep.shape[0]:
            return ()
        verts, start, count = ops.take(verts, keep), ops.take(start, keep), ops.take(count, keep)
        task_ptr = xp.zeros(int(keep.shape[0]) + 1, dtype=xp.int64)
        ops.cumsum(count, out=task_ptr[1:])
        return verts, start, task_ptr, int(task_ptr[-1])

    def _resident_blocks(self, kernel: Kernel) -> int:
        """Blocks of ``kernel`` one multiprocessor holds at once, from the registers its compiled code takes (its
        shared memory, under 5 KB a block, binds later): a grid of that many per multiprocessor keeps every warp
        busy and holds no more buffers than run at a time."""
        regs = int(self.kernels.function(kernel).num_regs)
        per_warp = -(-regs * 32 // 256) * 256  # registers are allocated to warps in units of 256
        return max(1, min(REGISTERS_PER_SM // (per_warp * (DFS_BLOCK // 32)), 2048 // DFS_BLOCK))
