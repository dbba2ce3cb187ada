"""The join driver: filter, plan, then vertex-at-a-time extension under a memory budget.

The driver is the same for every backend.  Per level it asks the backend for the rows' output bounds (one
prefix sum: every row's slice of one preallocated output space, Prealloc-Combine) and extends the table through
that space in chunks no larger than the level's share of the budget.  Chunks are finished depth-first, so the
tables alive at any moment are one chunk per level: memory stays bounded however many matches exist.  Counting
never materialises the last level; listing yields host arrays chunk by chunk.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import split_runs
from distsm.kernels.vertex_sets import restricted
from distsm.kernels.prepared import PreparedQuery
from distsm.kernels.records import LevelExtension
# The join's steering lives below the planners that poll it too (sampling); callers keep naming it here.
from distsm.kernels.records import Control as Control, JoinCancelled as JoinCancelled
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.ce_join import first_level_chunks
from distsm.kernels.index import DataIndex
from distsm.kernels.placement import Trial
from distsm.kernels.query_plan import UNCONSTRAINED, Constraints, MatchOptions, build_plan



def prepare(backend: Backend, data: Graph | DataIndex, query: Graph, options: MatchOptions, *,
            constraints: Constraints = UNCONSTRAINED, candidates: Sequence[Any] | None = None) -> PreparedQuery | None:
    """Filter candidates and plan the join under ``constraints``; None when some query vertex has no candidate
    (no match).

    ``data`` may be a graph or an already built index (e.g. a memory-mapped one).  ``candidates`` reuses the
    filter's output of an earlier call for the same query and data (``constraints.restrict`` still applies).
    """
    if isinstance(data, Graph):
        check_pair(data, query)
        idx = backend.index(data)
    else:
        idx = data
    restrict = constraints.restrict
    cands: Sequence[Any]
    if candidates is None:
        cands = backend.candidates(idx, query, homomorphism=options.homomorphism, restrict=restrict)
    elif not restrict:
        cands = candidates  # as given: a filter's CandidateSets keep their bitset rows
    else:
        cands = list(candidates)
        for u, allowed in restrict.items():
            cands[u] = restricted(backend.xp, cands[u], allowed)
    sizes = [int(c.shape[0]) for c in cands]
    if min(sizes) == 0:
        return None
    plan = build_plan(query, sizes, idx.label_entries, idx.n, options, constraints)
    return PreparedQuery(idx, plan, cands, partial(backend.bitset, idx),
                         vertex_labels=tuple(query.vertex_labels.tolist()))


def start_order(index: DataIndex, query: Graph, options: MatchOptions, candidates: list[Any],
                constraints: Constraints = UNCONSTRAINED) -> tuple[int, ...]:
    """The order in which the join of ``query`` visits its vertices (``constraints.prime_edge`` aside)."""
    sizes = [int(c.shape[0]) for c in candidates]
    plan = build_plan(query, sizes, index.label_entries, index.n, options, replace(constraints, prime_edge=None))
    return tuple(plan.order)


def check_pair(data: Graph, query: Graph) -> None:
    """Refuse query/data pairs the engine cannot match meaningfully."""
    if query.n == 0:
        raise ValueError("the query graph is empty")
    if data.directed != query.directed:
        kinds = {True: "directed", False: "undirected"}
        raise ValueError(f"the query is {kinds[query.directed]} but the data graph is {kinds[data.directed]}")
    if not query.is_connected():
        raise ValueError("the query graph is not connected; match each connected component separately")


@dataclass
class Watch:
    """Who follows a running join (:func:`walk`).

    ``stats``, when given, accumulates ``"partial"`` (partial matches produced at every level, the work measure
    PBE reports), ``"gathered"`` (adjacency entries read) and ``"level<i>"`` (rows produced whose last column is
    ``plan.order[i]``).  ``control`` cancels the join between chunks and receives progress (see
    :class:`Control`).  A ``trial`` (which needs ``stats``) ends the join early, with ``trial.stopped`` set, where
    :meth:`~distsm.kernels.placement.Trial.stops` says so: between chunks, or before a level (:meth:`doomed`),
    from the entries read, the level's and the share of the work :meth:`finished`.  The chunks then yielded are not
    the whole answer.
    """

    stats: dict[str, int] | None = None
    control: Control | None = None
    trial: Trial | None = None

    def __post_init__(self) -> None:
        if self.trial is not None and self.stats is None:
            raise ValueError("a trial join measures what it reads: pass stats")

    def halted(self) -> bool:
        """Checked before every chunk: raises when cancelled; True once a trial has passed its allowance."""
        if self.control is not None:
            self.control.check()
        if self.trial is not None and not self.trial.stopped:
            assert self.stats is not None  # checked on construction
            self.trial.stopped = self.trial.stops(self.stats.get("gathered", 0))
        return self.trial is not None and self.trial.stopped

    def doomed(self, entries: int, share: float, last: bool) -> bool:
        """Whether a trial stops before it reads a level (the ``last`` one or not) of ``entries`` entries from a
        table holding ``share`` of the join's work (the fraction of the first level's rows and of every chunked
        level above it that the table descends from): the level is projected to read ``entries / share`` over the
        whole join.  The trial is then stopped at once, not after reading it: a trial's chunks are half its
        allowance, so a rule that let a level's last chunk pass the allowance would read most of it first."""
        if self.trial is None or self.trial.stopped:
            return False
        assert self.stats is not None  # checked on construction
        self.trial.stopped = self.trial.stops(self.stats.get("gathered", 0), entries / share, last)
        return self.trial.stopped

    def finished(self, share: float) -> None:
        """Record that ``share`` of the join's work is done (a trial projects what is ahead from it)."""
        if self.trial is not None:
            self.trial.done += share

    def note(self, level: int, rows: int, read: int) -> None:
        """Count ``rows`` partial matches produced at ``level`` from ``read`` adjacency entries."""
        if self.stats is not None:
            for key, value in (("partial", rows), ("gathered", read), (f"level{level}", rows)):
                self.stats[key] = self.stats.get(key, 0) + value


#: Nobody follows the join.
UNWATCHED = Watch()


def walk(backend: Backend, prepared: PreparedQuery, budget: int | BudgetPlan, count_only: bool,
         spanning: Any = None, adjacency: Any = None, watch: Watch = UNWATCHED) -> Iterator[Any]:
    """Yield, chunk by chunk, survivor counts (``count_only``) or device tables of complete matches.

    Table columns follow ``prepared.plan.order``.  ``spanning`` (a backend ``Spanning``) is required exactly
    when the plan filters by partition.  ``adjacency`` (a :class:`~distsm.kernels.gather.HostAdjacency` whose
    core is ``prepared.index``) serves every level's adjacency in pieces gathered from host memory instead of the
    resident index, which is otherwise read split by the neighbours' vertex labels where it can be
    (:mod:`~distsm.kernels.split_runs`).  ``watch`` counts the join's work, cancels it or ends it as a trial
    (:class:`Watch`).
    """
    if adjacency is None:
        prepared = split_runs.split(backend, prepared, budget, watch.trial is not None)
    if prepared.plan.needs_partition != (spanning is not None):
        raise ValueError("a spanning search needs both a spanning plan and the partition assignment")
    yield from _Walk(backend, prepared, BudgetPlan.of(budget), count_only, spanning, adjacency, watch).run()


class _Walk:
    """One general join (:func:`walk`): the first level in chunks, each chunk descended depth first, a level at a
    time or fused on the device, every level's output cut into chunks of its share of the budget."""

    def __init__(self, backend: Backend, prepared: PreparedQuery, budgets: BudgetPlan, count_only: bool,
                 spanning: Any, adjacency: Any, watch: Watch):
        self.backend, self.prepared, self.budgets, self.count_only = backend, prepared, budgets, count_only
        self.extra = {} if spanning is None else {"spanning": spanning}
        self.adjacency, self.watch = adjacency, watch
        self.nq = len(prepared.plan.order)
        # A fused descent keeps two tables of at most this many rows (and nq columns) plus one level's workload:
        # under one level's share of the budget, like the chunks of the level-by-level path.
        self.fused_cap = budgets.chunk(self.nq, self.nq)

    def run(self) -> Iterator[Any]:
        plan, watch = self.prepared.plan, self.watch
        first = self.prepared.candidates[plan.order[0]]
        rows = int(first.shape[0])
        watch.note(0, rows, 0)
        for a, b in first_level_chunks(rows, self.budgets.chunk(self.nq, 1), watch.control):
            if watch.halted():
                return
            yield from self.descend(first[a:b][:, None], 1, (b - a) / rows)

    def pieces(self, table: Any, step: Any) -> Iterator[tuple[Any, DataIndex]]:
        if self.adjacency is None:
            yield table, self.prepared.index
        else:
            yield from self.adjacency.pieces(table, step)

    def descend(self, table: Any, level: int, share: float) -> Iterator[Any]:
        if level == self.nq:
            self.watch.finished(share)
            yield table.shape[0] if self.count_only else table
            return
        if self.watch.halted():
            return
        work = None
        if self.adjacency is None:
            run = self.backend.descend(self.prepared.index, table, level, self.prepared.plan, self.prepared.bits,
                                       self.count_only, self.fused_cap, **self.extra)
            if run is not None:
                for k, (read, survivors) in enumerate(run.levels):
                    self.watch.note(level + k, survivors, read)
                if run.level == self.nq:
                    self.watch.finished(share)
                    if self.count_only:
                        yield run.count
                    elif run.count:
                        yield run.table
                    return
                table, level, work = run.table, run.level, run.workload
        step = self.prepared.plan.steps[level - 1]
        rows = table.shape[0]
        for piece, piece_idx in self.pieces(table, step):
            yield from self.extend_level(piece, piece_idx, level, step, share * piece.shape[0] / rows, work)

    def extend_level(self, table: Any, idx: DataIndex, level: int, step: Any, share: float,
                     work: Any = None) -> Iterator[Any]:
        backend, watch = self.backend, self.watch
        delta, offsets, total = work if work is not None else backend.workload(idx, table, step)
        last = level == self.nq - 1
        chunk = self.budgets.chunk(self.nq, level + 1)
        if watch.doomed(total, share, last):
            return
        ext = LevelExtension(step, delta, offsets, self.prepared.bits[step.vertex], self.count_only and last,
                        self.extra.get("spanning"))
        for a in range(0, total, chunk):
            if watch.halted():
                return
            b = min(a + chunk, total)
            out = backend.extend(idx, table, ext, a, b)
            if watch.stats is not None:  # int() of a device count waits for the device: only when counted
                watch.note(level, int(out) if self.count_only and last else int(out.shape[0]), b - a)
            if last or not out.shape[0]:
                watch.finished(share * (b - a) / total)
            if last:
                yield out
            elif out.shape[0]:
                yield from self.descend(out, level + 1, share * (b - a) / total)
        if not total:
            watch.finished(share)


def iter_matches(backend: Backend, data: Graph, query: Graph, options: MatchOptions, *, budget: int | BudgetPlan,
                 limit: int | None = None, constraints: Constraints = UNCONSTRAINED,
                 control: Control | None = None) -> Iterator[np.ndarray]:
    """Yield host ``int64[rows, query.n]`` arrays of matches (column ``i`` = image of query vertex ``i``)."""
    if limit is not None and limit <= 0:
        return
    prepared = prepare(backend, data, query, options, constraints=constraints)
    if prepared is None:
        return
    inv = prepared.plan.inverse_order
    tables = walk(backend, prepared, budget, count_only=False, watch=Watch(control=control))
    yield from take((backend.to_host(t)[:, inv].astype(np.int64) for t in tables), limit)


def take(chunks: Iterator[np.ndarray], limit: int | None) -> Iterator[np.ndarray]:
    """The non-empty row chunks of ``chunks`` up to ``limit`` rows in all (None: all); stops reading at the
    limit, so the producer's remaining work is never done."""
    left = limit
    for rows in chunks:
        if left is not None:
            rows = rows[:left]
            left -= rows.shape[0]
        if rows.shape[0]:
            yield rows
        if left == 0:
            return
