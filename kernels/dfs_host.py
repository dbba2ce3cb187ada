"""The reference count of a :class:`~distsm.kernels.dfs_plan.DfsProgram` on an array module (NumPy; CuPy at array
level): the same sets as the device kernel, level by level over tables cut into chunks within a budget.

It reads no stored set (``reuse`` and the pair tail are the kernel's savings, not semantics), so it checks them:
every set is built from its runs, bounds and tests as the program's words state them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from distsm.kernels import array_ops as ops
from distsm.kernels.dfs_plan import DfsProgram
from distsm import caches
from distsm.kernels.ranked import RankedGraph
from distsm.kernels.records import Control

#: Bytes per gathered entry of a chunk (its row, value, run bounds and masks), for cutting chunks to the budget.
ENTRY_BYTES = 48

_KEYS = caches.cache("ranked run keys", "RankedGraph -> int64 run * n + rank of every entry, sorted")


def run_keys(xp: Any, g: RankedGraph) -> Any:
    """``run * n + rank`` for every entry of ``g`` (int64, sorted), kept for the ranked graph's lifetime: the
    members of a run below a rank are one binary search away."""
    keys = _KEYS.get(g)
    if keys is None:
        run, _ = ops.expand(ops.subtract(g.ptr[1:], g.ptr[:-1]))
        keys = _KEYS.put(g, ops.scaled_add(run, g.n, g.nbr))
    return keys


def _member(xp: Any, g: RankedGraph, v: Any, e: int, x: Any) -> Any:
    """``x[i] in N(v[i], e)``."""
    keys = run_keys(xp, g)
    want = (v.astype(xp.int64) * g.labels + e) * g.n + x.astype(xp.int64)
    pos = xp.minimum(xp.searchsorted(keys, want), max(int(keys.shape[0]) - 1, 0))
    return keys[pos] == want if keys.shape[0] else xp.zeros(x.shape[0], dtype=bool)


def row_chunks(lengths: Any, cap: float) -> Iterator[tuple[int, int]]:
    """Row ranges whose ``lengths`` sum to at most ``cap``, or single rows that alone exceed it."""
    ends = ops.cumsum(lengths)
    rows, a = int(lengths.shape[0]), 0
    while a < rows:
        base = ends[a - 1].item() if a else 0
        b = max(a + 1, ops.search_right(ends, base + cap))
        yield a, b
        a = b


@dataclass(frozen=True)
class TaskRuns:
    """The search's tasks as the kernel numbers them: ``verts`` the level-0 candidates (ranks of the first level's
    label, ascending), and for each the part of its first-edge run that level 1 may take (``start``,
    ``lengths``: cut at the run's own vertex where the two are ordered) and ``ends`` the running task count; task
    ``t`` is entry ``t - offset`` of the run of the vertex whose tasks hold it, ``offset`` the tasks of the
    vertices before it."""

    verts: Any
    start: Any
    lengths: Any
    ends: Any

    @property
    def total(self) -> int:
        return int(self.ends[-1]) if self.ends.shape[0] else 0

    def images(self, xp: Any, g: RankedGraph, lo: int, hi: int) -> tuple[Any, Any]:
        """``(v0, v1)`` (int64) of the tasks ``[lo, hi)``."""
        t = xp.arange(lo, hi, dtype=xp.int64)
        row = xp.searchsorted(self.ends, t, side="right")
        v1 = g.nbr[self.start[row] + t - (self.ends[row] - self.lengths[row])].astype(xp.int64)
        return self.verts[row], v1


def task_runs(g: RankedGraph, prog: DfsProgram) -> TaskRuns:
    """The :class:`TaskRuns` of ``prog`` on ``g``."""
    first, second = prog.level(0), prog.level(1)
    verts = ops.arange_like(g.ptr, g.n) if first[0] < 0 else ops.positions_of(g.vertex_labels, first[0])
    run = ops.affine(verts, g.labels, int(prog.words[3]))
    lo = g.up if second[2] & 1 else g.ptr        # v1 > v0: the run above v0
    hi = g.up if second[3] & 1 else g.ptr[1:]    # v1 < v0: the run below it
    start, lengths = ops.spans(lo, hi, run)
    lengths = ops.affine(lengths, 1, 0, 0)
    return TaskRuns(verts, start, lengths, ops.cumsum(lengths))


def count(xp: Any, g: RankedGraph, prog: DfsProgram, budget: int, control: Control | None = None,
          tasks: tuple[int, int] | None = None, weights: Any | None = None) -> int:
    """Matches of the program's pattern in ``g`` that satisfy its symmetry breaking (see
    :mod:`distsm.kernels.dfs_plan`), reading at most about ``budget`` bytes of entries at a time; ``tasks``
    (``[lo, hi)`` of :class:`TaskRuns`' numbering) restricts it to those tasks' matches; ``control`` is checked
    before each chunk of tasks.  With ``weights`` (int64 per rank) each match counts the sum of its vertices'
    weights instead of one."""
    cap = max(1, budget // ENTRY_BYTES)
    runs = task_runs(g, prog)
    lo, hi = tasks if tasks is not None else (0, runs.total)
    label1 = int(prog.level(1)[0])
    total = 0
    for a in range(lo, hi, cap):
        if control is not None:
            control.check()
        v0, x = runs.images(xp, g, a, min(a + cap, hi))
        keep = xp.ones(x.shape[0], dtype=bool) if label1 < 0 else g.vertex_labels[x] == label1
        table = xp.stack([v0[keep], x[keep]], axis=1)
        total += _tally(xp, table, weights) if prog.levels == 2 else _extend(xp, g, prog, table, 2, cap, weights)
    return total


def _tally(xp: Any, rows: Any, weights: Any | None) -> int:
    """What the matches ``rows`` count: one each, or the sum of their vertices' ``weights``."""
    return int(rows.shape[0]) if weights is None else int(weights[rows].sum())


def _extend(xp: Any, g: RankedGraph, prog: DfsProgram, table: Any, i: int, cap: int, weights: Any | None) -> int:
    words = prog.level(i)
    label, nb, lower, upper, distinct = (int(w) for w in words[:5])
    js = [j for j in range(i) if nb >> j & 1]
    j0, e0 = js[0], int(words[7 + js[0]])
    run = table[:, j0] * g.labels + e0
    start, end = g.ptr[run], g.ptr[run + 1]
    total = 0
    for a, b in row_chunks(end - start, cap):
        lengths = end[a:b] - start[a:b]
        row = xp.repeat(xp.arange(b - a, dtype=xp.int64), lengths)
        offset = xp.arange(int(row.shape[0]), dtype=xp.int64) - xp.repeat(xp.cumsum(lengths) - lengths, lengths)
        x = g.nbr[start[a:b][row] + offset].astype(xp.int64)
        rows = table[a:b][row]
        ok = xp.ones(x.shape[0], dtype=bool) if label < 0 else g.vertex_labels[x] == label
        for j in range(i):
            if lower >> j & 1:
                ok &= x > rows[:, j]
            if upper >> j & 1:
                ok &= x < rows[:, j]
            if distinct >> j & 1:
                ok &= x != rows[:, j]
        if prog.pair_tail and i == prog.levels - 1:  # the tail's relation to the level before it (module doc)
            rel, x_a = int(prog.words[2]), rows[:, i - 1]
            ok &= x > x_a if rel > 0 else x < x_a if rel < 0 else x != x_a
        for j in js[1:]:
            ok &= _member(xp, g, rows[:, j], int(words[7 + j]), x)
        if i == prog.levels - 1 and weights is None:
            total += int(xp.count_nonzero(ok))
        elif i == prog.levels - 1:
            total += _tally(xp, rows[ok], weights) + _tally(xp, x[ok], weights)
        else:
            total += _extend(xp, g, prog, xp.concatenate([rows[ok], x[ok].reshape(-1, 1)], axis=1), i + 1, cap,
                             weights)
    return total


def order_check(xp: Any, g: RankedGraph) -> bool:
    """Whether every run of ``g`` is sorted and strictly increasing (a ranked graph's invariant)."""
    keys = run_keys(xp, g)
    return bool(xp.all(keys[1:] > keys[:-1])) if keys.shape[0] > 1 else True

