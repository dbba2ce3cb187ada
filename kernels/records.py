"""The values the backend interface (:class:`~distsm.kernels.backend.Backend`) takes and returns besides arrays:
allowed vertex ids, what a fused descent did, what a spanning search tests, and how a caller cancels a join.  They
sit below every backend and the interface itself, so that the two import only downwards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.kernels.query_plan import ARC_TO_NEW, UNDIRECTED, PrimeEdge, Step



@dataclass
class Descent:
    """What :meth:`~distsm.kernels.array_backend.ArrayBackend.descend` did with a table at level ``start``.

    ``level`` is the level reached.  Finished (``level`` equals the query size): ``count`` matches, whose rows
    are ``table`` unless counting.  Stopped (a level too large to fuse): ``table`` is the partial-match table of
    ``level`` and ``workload`` its :meth:`~distsm.kernels.array_backend.ArrayBackend.workload`, ready for the
    level-by-level path.
    ``levels`` holds ``(output space, survivors)`` of every level extended on the way.
    """

    level: int
    table: Any
    count: int
    workload: tuple[Any, Any, int] | None
    levels: list[tuple[int, int]]


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
        prime = self.prime
        assert prime is not None, "DUPREMOVE checks come with a prime edge"
        arc = UNDIRECTED if not prime.directed else ARC_TO_NEW
        second = cand if table.shape[1] == 1 else table[rowid, 1]
        prime_key = self.edge_key(xp, n, table[rowid, 0], second, arc)
        for col, code, j in step.dup_checks:
            other = table[rowid, col]
            key = self.edge_key(xp, n, other, cand, code)
            earlier = (key < prime_key) | ((key == prime_key) & (j < prime.edge_index))
            keep &= ~((part[other] != part[cand]) & earlier)
        return keep


@dataclass(frozen=True)
class LevelExtension:
    """One level's extension of a table, as :meth:`~distsm.kernels.backend.Backend.extend` takes it: the plan's
    ``step``, the table's workload over it (``delta`` and ``offsets`` from
    :meth:`~distsm.kernels.backend.Backend.workload`: entry ``e`` of row ``r`` is adjacency entry
    ``e + delta[r]``, rows end at ``offsets``), the new vertex's candidate ``bits``, whether only the survivors'
    number is wanted, and the ``spanning`` filters of an inter-partition search (None inside a partition)."""

    step: Step
    delta: Any
    offsets: Any
    bits: Any
    count_only: bool
    spanning: Spanning | None = None


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (backends cache uploads per program)
class TrailingProgram:
    """A plan's trailing count, or one core extension, as a fused pass reads it (built by
    :func:`distsm.kernels.ce_join.fused_program`, through :func:`distsm.kernels.trailing.trailing_program` for a
    trailing count).

    ``words`` (int32, host) is the program whose layout ``fused_program`` documents; ``arcs`` holds per arc
    slot the arc's run ``offsets`` (int64) and ``values``, and the ``lookup`` that finds a source's position: its
    position map (int32 over the data vertices) where ``positions``, else its sorted candidates.  ``links`` is the
    extensions' links in all and ``largest_group`` the most vertices of one group (the limits a kernel
    checks).  ``targets`` holds per extension its vertex's sorted candidates (what its runs lie in),
    ``arc_extension`` per arc slot the extension it serves, and ``groups`` the extensions of each label group (a
    pass by bit rows numbers a group's vertices in the union of its members' candidates)."""

    words: np.ndarray
    arcs: tuple[tuple[Any, Any, Any], ...]
    positions: bool
    links: int
    largest_group: int
    targets: tuple[Any, ...] = ()
    arc_extension: tuple[int, ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class TrailingTotals:
    """A fused trailing count of a table: for the rows ``[cuts[i], cuts[i + 1])``, ``totals[i]`` is the sum of
    their completions computed in int64 and ``bounds[i]`` the sum of their bounds (prod over label groups of
    ``|g|! * prod_j |S_j|``, in float64), so ``totals[i]`` is exact where ``bounds[i]`` is below 2^62 (every
    product and partial sum is bounded by it); ``entries`` is the run entries the pass walked, ``words`` the 8-byte
    bit-row words it read instead (a pass by bit rows walks no run).  Host arrays."""

    cuts: np.ndarray     # int64[ranges + 1]
    totals: np.ndarray   # int64[ranges]
    bounds: np.ndarray   # float64[ranges]
    entries: int
    words: int = 0


class JoinCancelled(Exception):
    """Raised inside :func:`walk` when its :class:`Control` says the caller no longer wants the result."""


@dataclass(frozen=True)
class Control:
    """How a caller steers a running join.

    ``cancelled`` is polled before every chunk at every level (so a cancelled join stops within one chunk's
    work, and its device tables are freed as the generator unwinds); when it returns True the join raises
    :class:`JoinCancelled`.  ``progress(done, total)`` is called as chunks of the first level finish, in units
    of first-level rows.
    """

    cancelled: Callable[[], bool] | None = None
    progress: Callable[[int, int], None] | None = None

    def check(self) -> None:
        if self.cancelled is not None and self.cancelled():
            raise JoinCancelled("the join was cancelled")
