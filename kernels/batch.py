"""Counting a batch of light queries together: one filter, cheap plans, and one level-synchronous join.

A light query (HPRD's, most of a small-query batch) costs far more in per-query Python and per-call overhead than in
array work: its general join touches a few hundred adjacency entries through a few dozen array calls per level.
Counting the queries of a batch one at a time pays that overhead per query; here it is paid per batch.

* **Filter**: every query vertex of the batch is filtered in one pass, as a vertex of the disjoint union of the
  queries (:meth:`~distsm.kernels.array_backend.ArrayBackend.candidates_of`).
* **Plan**: each query is planned as :func:`~distsm.kernels.engine.prepare` plans it (same order, same steps), all
  at once (:func:`~distsm.kernels.batch_plan.build_plans`), and without candidate sets over the data vertices
  (:class:`~distsm.kernels.prepared.PreparedQuery` builds them only when a per-query join asks).
* **Join** (:func:`join_counts`, the array-level
  :meth:`~distsm.kernels.array_backend.ArrayBackend.count_prepared`): one partial-match table holds the rows of
  every query, each row tagged with its query; level ``i`` extends every row by its query's step ``i``.  The
  steps' parameters (:class:`~distsm.kernels.query_plan.Step`: first edge, edge checks, injectivity, symmetry and
  induced checks) are packed into arrays indexed by query, padded with -1 where a query has fewer checks of a kind,
  so one level costs a fixed number of array calls however many queries it carries.  Candidate membership is one
  binary search in the sorted keys ``set * n + vertex`` of every query vertex's candidates.  Rows of queries that
  reach their last level are counted with one ``bincount`` and dropped.
* **Allowance**: each query may read ``allowance[i]`` adjacency entries (the first edges' runs, as a trial join
  measures them).  Before a level is expanded, a query whose entries read pass its allowance is dropped with the
  answer None, to be counted alone by the per-query stages (:class:`~distsm.kernels.counting.Count`), which may
  find it heavy.  So a level's output space never exceeds the summed allowances.  :func:`count_light` first runs
  the whole batch at once with every allowance cut by one factor so that together they fit the memory budget
  (light queries read far less than their allowance), then the queries that passed their cut allowance again
  with their own, in groups that fit the budget.
* **Runs**: the batch reads whole adjacency runs on every backend, not runs split by neighbour label as a single
  query's join on a device does (:mod:`~distsm.kernels.split_runs`): its queries are light, and split runs made
  HPRD's batch slower (each run is then found through the hash) for a small gain on gMatch's suite
  (measurements: benchmarks/README.md, 'Measurements behind the engine's settings').

Answers equal the per-query general join's: same candidates, same steps, same tests, only evaluated together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from distsm.config import engine_options
from distsm.graph import Graph
from distsm.kernels.vertex_sets import member
from distsm.kernels.array_ops import bincount, count_true
from distsm.kernels.budget import BudgetPlan, join_entry_bytes
from distsm.kernels.batch_plan import build_plans
from distsm.kernels.candidate_sets import CandidateSets, candidate_sets
from distsm.kernels.prepared import PreparedQuery
from distsm.kernels.records import Control
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import MatchOptions, QueryPlan

if TYPE_CHECKING:
    from distsm.kernels.array_backend import ArrayBackend
    from distsm.kernels.backend import Backend


@dataclass(frozen=True)
class Slots:
    """One kind of per-step check, packed for a batch: ``cols[level - 1, slot, query]`` is a column the check reads
    (-1: no such check), ``values`` the check's label or required count in the same layout, and ``used[level - 1]``
    the slots any query uses at that level."""

    cols: Any
    values: Any
    used: list[int]


@dataclass(frozen=True)
class Programs:
    """The steps of a batch's plans as arrays indexed by ``[level - 1, query]`` (see the module docstring)."""

    first_col: Any
    first_label: Any
    member_set: Any      # the candidate set (query's first set + vertex) the new vertex must belong to
    last: Any            # bool: the level completes the query
    checks: Slots        # new vertex in N(row[col], label)
    greater: Slots       # new vertex > row[col]
    less: Slots          # new vertex < row[col]
    distinct: Slots      # new vertex != row[col]
    pairs: Slots         # adjacency entries between row[col] and the new vertex == value


def pack(xp: Any, plans: Sequence[QueryPlan], set_base: Sequence[int]) -> Programs:
    """The :class:`Programs` of ``plans`` on ``xp`` (``set_base[q]``: the set id of query ``q``'s vertex 0)."""
    nq = len(plans)
    levels = max(len(p.order) for p in plans) - 1
    # Every step of the batch in one list (query-major), with its level and query: one pass per field, each read
    # through fromiter (a batch has thousands of steps; lists of tuples convert to arrays several times slower).
    steps = [step for p in plans for step in p.steps]
    nsteps = np.array([len(p.steps) for p in plans], dtype=np.int64)
    query = np.repeat(np.arange(nq), nsteps)
    level = np.arange(len(steps)) - np.repeat(np.cumsum(nsteps) - nsteps, nsteps)

    def field(name: str) -> np.ndarray:
        return np.fromiter(map(attrgetter(name), steps), np.int64, len(steps))

    first_col = np.zeros((levels, nq), np.int64)
    first_label = np.full((levels, nq), -1, np.int64)
    member_set = np.zeros((levels, nq), np.int64)
    last = np.zeros((levels, nq), bool)
    first_col[level, query] = field("first_col")
    first_label[level, query] = field("first_label")
    member_set[level, query] = field("vertex") + np.asarray(set_base, dtype=np.int64)[query]
    last[nsteps[nsteps > 0] - 1, np.flatnonzero(nsteps)] = True

    def slots(name: str, pairs: bool) -> Slots:
        """The checks of field ``name`` of every step, each a column (or a (column, value) pair when ``pairs``)."""
        groups = list(map(attrgetter(name), steps))
        counts = np.fromiter(map(len, groups), np.int64, len(groups))
        flat = chain.from_iterable(groups)
        a = np.fromiter(chain.from_iterable(flat) if pairs else flat, np.int64).reshape(-1, 2 if pairs else 1)
        step = np.repeat(np.arange(len(groups)), counts)
        slot = np.arange(step.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
        width = int(counts.max()) if counts.shape[0] else 0
        cols = np.full((levels, width, nq), -1, np.int64)
        values = np.zeros((levels, width, nq), np.int64)
        at = (level[step], slot, query[step])
        cols[at] = a[:, 0]
        if pairs:
            values[at] = a[:, 1]
        used = np.zeros(levels, np.int64)
        np.maximum.at(used, at[0], slot + 1)
        return Slots(xp.asarray(cols), xp.asarray(values), used.tolist())

    return Programs(xp.asarray(first_col), xp.asarray(first_label), xp.asarray(member_set), xp.asarray(last),
                    slots("checks", True), slots("greater_than", False), slots("less_than", False),
                    slots("distinct_cols", False), slots("pair_checks", True))


def runs(xp: Any, idx: DataIndex, v: Any, label: Any) -> tuple[Any, Any, Any, Any]:
    """``(start, end, run id, found)`` of the runs ``N(v[i], label[i])`` (per-element labels; a label the data
    graph does not use, or -1, finds no run and gives an empty one)."""
    if idx.num_labels == 1:
        found = label == 0
        s = idx.run_start.take(v)
        return s, xp.where(found, idx.run_end.take(v), s), v, found
    nl = idx.num_labels
    valid = (label >= 0) & (label < nl)
    key = v * nl + xp.where(valid, label, 0)
    pos = xp.minimum(xp.searchsorted(idx.run_keys, key), idx.run_keys.shape[0] - 1)
    found = (idx.run_keys.take(pos) == key) & valid
    s = xp.where(found, idx.run_start.take(pos), 0)
    t = xp.where(found, idx.run_end.take(pos), 0)
    return s, t, pos, found


#: How a batch tests membership in its candidate sets, by their cells (sets times data vertices): up to
#: ``SET_MASK`` cells one bool mask (one gather per test, 4 MiB at most), up to ``SET_BITS`` one bitset (a gather
#: and a few bit operations, 32 MiB at most), past that a binary search in the sets' sorted keys (several times
#: slower than either, but no memory beyond the keys).  The mask stays small because its memory is fresh each
#: batch: HPRD's 200 (28M cells) spent more zeroing a 28 MiB mask's new pages than the bitset's bit operations
#: cost.
SET_MASK = 1 << 22
SET_BITS = 1 << 28


def membership(backend: ArrayBackend, keys: Any, cells: int) -> Callable[[Any], Any]:
    """The test ``key in keys`` (``keys``: sorted distinct ``set * n + vertex`` of every candidate set, ``cells``
    possible keys) as a function of a key array returning a mask (see :data:`SET_MASK`)."""
    xp = backend.xp
    if cells <= SET_MASK:
        mask = xp.zeros(cells, dtype=bool)
        mask[keys] = True
        return partial(member, xp, mask)
    if cells <= SET_BITS:
        # Distinct bits of a word sum to their OR, and float64 holds 32-bit sums exactly: one bincount on either
        # array module builds the words.
        bit = xp.left_shift(xp.uint32(1), (keys & 31).astype(xp.uint32)).astype(xp.float64)
        words = bincount(keys >> 5, (cells + 31) // 32, bit).astype(xp.uint32)
        return partial(member, xp, words)
    return partial(backend._contains, keys)


@dataclass
class _Start:
    """A batch's first level: each query's vertex count and the offset of its candidate sets, membership tests of
    every set, the counts of one-vertex queries, and the first level's rows with their queries (None: none)."""

    index: DataIndex
    sizes: list[int]
    set_base: np.ndarray
    member_of: Any
    counts: np.ndarray
    table: Any
    qid: Any

    @classmethod
    def of(cls, backend: ArrayBackend, prepared: Sequence[PreparedQuery]) -> _Start:
        idx = prepared[0].index
        if any(p.index is not idx for p in prepared):
            raise ValueError("a batch's queries must be prepared on one index")
        if any(p.plan.needs_partition for p in prepared):
            raise ValueError("a spanning search cannot be counted in a batch")
        xp, n = backend.xp, idx.n
        sizes = [len(p.plan.order) for p in prepared]
        set_base = np.cumsum(sizes) - sizes
        sets = [candidate_sets(xp, p.candidates) for p in prepared]
        csize = np.array([size for s in sets for size in s.sizes], dtype=np.int64)
        if not csize.all():
            raise ValueError("a prepared query has a vertex without candidates")
        # Sorted keys of every candidate set: the sets are numbered in order and each one is sorted.
        # (CuPy's repeat takes no array of repeats: rows of repeated values come from the backend's expand.)
        keys = xp.concatenate([s.values for s in sets]).astype(xp.int64) + backend.expand(xp.asarray(csize))[0] * n
        member_of = membership(backend, keys, csize.shape[0] * n)
        counts = np.zeros(len(prepared), dtype=np.int64)
        firsts = set_base + np.array([p.plan.order[0] for p in prepared])
        fsize = np.where(np.array(sizes) > 1, csize[firsts], 0)
        counts[np.array(sizes) == 1] = csize[firsts[np.array(sizes) == 1]]
        if fsize.sum() == 0:
            return cls(idx, sizes, set_base, member_of, counts, None, None)
        table = xp.concatenate([p.candidates[p.plan.order[0]] for p, k in zip(prepared, fsize.tolist()) if k])
        return cls(idx, sizes, set_base, member_of, counts, table.astype(xp.int64)[:, None],
                   backend.expand(xp.asarray(fsize))[0])


def join_counts(backend: ArrayBackend, prepared: Sequence[PreparedQuery],
                allowance: Sequence[int]) -> list[int | None]:
    """The general join's count of each of ``prepared`` (all on one index), joined together level by level; None
    for a query that would read more than ``allowance[i]`` adjacency entries (see the module docstring).  Uses
    array-level calls of ``backend.xp`` only."""
    if len(allowance) != len(prepared):
        raise ValueError("one allowance per prepared query")
    if not prepared:
        return []
    start = _Start.of(backend, prepared)
    idx, xp, n, nq = start.index, backend.xp, start.index.n, len(prepared)
    sizes, set_base, member_of, counts, table, qid = (start.sizes, start.set_base, start.member_of, start.counts,
                                                      start.table, start.qid)
    if table is None:
        return list(counts.tolist())
    prog = pack(xp, [p.plan for p in prepared], set_base.tolist())
    allow = xp.asarray(np.asarray(allowance, dtype=np.float64))
    read = xp.zeros(nq, dtype=xp.float64)
    alive = xp.ones(nq, dtype=bool)
    found = xp.zeros(nq, dtype=xp.int64)
    nbr = idx.nbr
    for level in range(1, max(sizes)):
        if not table.shape[0]:
            break
        i = level - 1
        flat = table.reshape(-1)
        base = xp.arange(table.shape[0], dtype=xp.int64) * level
        s, t, _, _ = runs(xp, idx, flat.take(base + prog.first_col[i].take(qid)), prog.first_label[i].take(qid))
        c = t - s
        read += bincount(qid, nq, c)
        over = alive & (read > allow)
        if count_true(over):
            alive &= ~over
            keep = alive.take(qid)
            table, qid, s, c = table[keep], qid[keep], s[keep], c[keep]
            flat = table.reshape(-1)
        rowid, rank = backend.expand(c)
        if not rowid.shape[0]:
            break
        cand = nbr.take(s.take(rowid) + rank)
        keep = member_of((prog.member_set[i].take(qid) * n).take(rowid) + cand)
        rowid, cand = rowid[keep], cand[keep]
        at = Level(xp, prog, i, flat, level)
        e = _edge_tests(backend, idx, at, _column_tests(at, Entries(rowid, cand, qid.take(rowid))))
        done = prog.last[i].take(e.query)
        found += bincount(e.query[done], nq)
        e = e.keep(~done)
        table = xp.concatenate([table.take(e.rowid, axis=0), e.cand.astype(xp.int64)[:, None]], axis=1)
        qid = e.query
    counts += backend.to_host(found)
    ok = backend.to_host(alive).tolist()
    return [int(k) if live else None for k, live in zip(counts.tolist(), ok)]


@dataclass
class Entries:
    """A level's output entries that pass the tests so far: each one's table row, candidate vertex and query."""

    rowid: Any
    cand: Any
    query: Any

    def keep(self, mask: Any) -> Entries:
        return Entries(self.rowid[mask], self.cand[mask], self.query[mask])


@dataclass(frozen=True)
class Level:
    """Level ``i + 1`` of a batch's join: the packed steps and the table it extends (flattened, ``width`` columns)."""

    xp: Any
    prog: Programs
    i: int
    flat: Any
    width: int

    def slot(self, slots: Slots, j: int, e: Entries) -> tuple[Any, Any]:
        """``(column, the row's vertex in that column)`` of slot ``j`` of ``slots`` for each entry (column -1: the
        entry's query has no such check; the vertex is then column 0's)."""
        col = slots.cols[self.i, j].take(e.query)
        return col, self.flat.take(e.rowid * self.width + self.xp.maximum(col, 0))


def _column_tests(level: Level, e: Entries) -> Entries:
    """The entries that pass the level's comparisons with earlier columns (symmetry breaking, injectivity); a slot
    an entry's query does not use compares with a value every vertex passes."""
    xp, prog = level.xp, level.prog
    keep = None
    for slots, op, free in ((prog.greater, xp.greater, -1), (prog.less, xp.less, np.iinfo(np.int64).max),
                            (prog.distinct, xp.not_equal, -1)):
        for j in range(slots.used[level.i]):
            col, other = level.slot(slots, j, e)
            ok = op(e.cand, xp.where(col < 0, free, other))
            keep = ok if keep is None else keep & ok
    return e if keep is None else e.keep(keep)


def _edge_tests(backend: ArrayBackend, idx: DataIndex, level: Level, e: Entries) -> Entries:
    """The entries that pass the level's edge checks (new vertex in ``N(row[col], label)``) and, induced, its
    entry-count checks; each slot filters the survivors of the previous one."""
    xp, prog, i = backend.xp, level.prog, level.i
    for j in range(prog.checks.used[i]):
        if not e.cand.shape[0]:
            break
        col, x = level.slot(prog.checks, j, e)
        _, _, run, found = runs(xp, idx, x, prog.checks.values[i, j].take(e.query))
        hit = backend._contains(idx.entry_keys, run * idx.n + e.cand) & found if idx.entry_keys.shape[0] \
            else found & False
        e = e.keep(hit | (col < 0))
    for j in range(prog.pairs.used[i]):
        if not e.cand.shape[0]:
            break
        col, x = level.slot(prog.pairs, j, e)
        e = e.keep((backend.pair_count(idx, x, e.cand) == prog.pairs.values[i, j].take(e.query)) | (col < 0))
    return e


@dataclass(frozen=True)
class LightBatch:
    """The queries of a batch and how each is counted: ``options`` for all, ``less_than`` symmetry-breaking pairs
    per query (empty: none), ``allowance`` adjacency entries per query (None: ``distsm.engine.trial-entries``
    per query vertex, the least allowance of a per-query trial join)."""

    queries: Sequence[Graph]
    options: MatchOptions
    less_than: Sequence[tuple[tuple[int, int], ...]] | None = None
    allowance: Sequence[int] | None = None

    def allowances(self) -> list[int]:
        if self.allowance is not None:
            return list(self.allowance)
        per_vertex = engine_options().trial_entries
        return [per_vertex * q.n for q in self.queries]


def count_light(backend: Backend, index: DataIndex, batch: LightBatch, budget: int | BudgetPlan, *,
                control: Control | None = None, candidates: list[CandidateSets] | None = None) -> list[int | None]:
    """Count every query of ``batch`` on ``index`` whose general join is light, together; None for the others
    (a join past its allowance, or one whose share of the batch alone would not fit ``budget``), which the caller
    counts alone.  ``control`` cancels between groups; ``candidates`` is the batch's filter
    (:meth:`~distsm.kernels.backend.Backend.candidates_of`) where the caller ran it.  See the module docstring."""
    queries = list(batch.queries)
    less = list(batch.less_than) if batch.less_than is not None else [()] * len(queries)
    allow = batch.allowances()
    if not len(less) == len(allow) == len(queries):
        raise ValueError("less_than and allowance need one entry per query")
    out: list[int | None] = [None] * len(queries)
    if not queries:
        return out
    cands = candidates if candidates is not None else \
        backend.candidates_of(index, queries, homomorphism=batch.options.homomorphism,
                              room=BudgetPlan.of(budget).filter_bytes())
    bitset = partial(backend.bitset, index)
    live = []
    for k, c in enumerate(cands):
        if min(c.sizes) == 0:
            out[k] = 0   # a vertex without candidates: no match, and no plan
        else:
            live.append(k)
    built = build_plans([queries[k] for k in live], [cands[k].sizes for k in live], index.label_entries, index.n,
                        batch.options, [less[k] for k in live])
    plans = [(k, PreparedQuery(index, plan, cands[k], bitset)) for k, plan in zip(live, built)]
    limit = BudgetPlan.of(budget).total
    cut = fitting_allowances([p for _, p in plans], [allow[k] for k, _ in plans], limit)
    if cut is not None:
        # Round one: the whole batch at once, each allowance cut so that together they fit the budget.  A query
        # past its cut allowance (not its own) tries again in round two.
        _run(backend, [(k, p, a) for (k, p), a in zip(plans, cut)], out, budget, control)
        plans = [(k, p) for (k, p), a in zip(plans, cut) if out[k] is None and a < allow[k]]
    # Round two: full allowances, in groups that fit the budget.
    group: list[tuple[int, PreparedQuery, int]] = []
    held = 0
    for k, p in plans:
        need = need_bytes(p, allow[k])
        if need > limit:
            continue
        if held + need > limit:
            _run(backend, group, out, budget, control)
            group, held = [], 0
        group.append((k, p, allow[k]))
        held += need
    _run(backend, group, out, budget, control)
    return out


#: Round one of :func:`count_light` runs when the budget leaves every query at least this fraction of its allowance.
LEAST_CUT = 1 / 64


def fitting_allowances(prepared: Sequence[PreparedQuery], allowance: Sequence[int], limit: int) -> list[int] | None:
    """Allowances no larger than ``allowance``, cut by one factor so that all of ``prepared`` together need at most
    ``limit`` bytes (:func:`need_bytes`); None where that leaves less than :data:`LEAST_CUT` of them."""
    first = sum(need_bytes(p, 0) for p in prepared)
    per_entry = sum(join_entry_bytes(len(p.plan.order)) * a for p, a in zip(prepared, allowance))
    factor = min(1.0, (limit - first) / per_entry) if per_entry else 1.0
    if factor < LEAST_CUT:
        return None
    return [int(factor * a) for a in allowance]


def need_bytes(prepared: PreparedQuery, allowance: int) -> int:
    """The most bytes one query of a batch may hold at once: its first level's rows and no more output entries than
    its allowance, each at most a general-join entry of its width."""
    first = int(prepared.candidates[prepared.plan.order[0]].shape[0])
    return (first + allowance) * join_entry_bytes(len(prepared.plan.order))


def _run(backend: Backend, group: list[tuple[int, PreparedQuery, int]], out: list[int | None],
         budget: int | BudgetPlan, control: Control | None) -> None:
    """Count ``group`` (``(position, prepared query, allowance)``) together into ``out``."""
    if not group:
        return
    if control is not None:
        control.check()
    found = backend.count_prepared([p for _, p, _ in group], [a for _, _, a in group], budget)
    for (k, _, _), value in zip(group, found):
        out[k] = value
