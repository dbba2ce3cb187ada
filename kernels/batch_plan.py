"""Planning a batch of queries at once: :func:`build_plans` gives every query the plan that
:func:`~distsm.kernels.query_plan.build_plan` gives it alone, computed with array operations across the batch.

A light query's plan costs a hundred microseconds of Python (the greedy order's frontier, one sorted list of linking
edges per level), as much as a whole batch's join spends on it.  Here the queries of a batch are padded to one
width ``N`` (their most vertices) and planned together:

* **Order**: :func:`~distsm.kernels.order.gsi_order` level by level for all queries at once, on ``queries x N``
  arrays of log estimates (inf once placed) and link counts.  Ties break as there, so the estimates must be the same
  floats: the logarithms are taken with :func:`math.log` on each distinct value, as ``gsi_order`` takes them, and
  each vertex's estimate gains its adjacency entries' log-selectivities one at a time in ``gsi_order``'s order
  (placed vertex by placed vertex, each vertex's row in adjacency order).
* **Steps**: every adjacency entry of the batch at once: it links its vertex's level when its neighbour sits in an
  earlier column; one sort ranks each level's links as ``build_plan`` ranks them.  Injectivity and induced checks
  come from ``queries x N x N`` entry counts in column order, symmetry-breaking checks from the ``less_than``
  pairs.  Light queries' levels repeat few tuples of checks, so each distinct tuple is made once (found by an
  integer key per level) and shared; the :class:`~distsm.kernels.query_plan.Step` objects are made last, by one
  ``map``.

Only the plans of whole queries are made (no prime edge, no spanning-only level, the default order function).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.query_plan import MatchOptions, QueryPlan, Step

#: Most cells (queries times width squared) one chunk of the batch pads to: its ``queries x N x N`` arrays of
#: entry counts and log-selectivities stay within a few tens of MiB however many queries a batch holds.
CHUNK_CELLS = 1 << 21

#: Bound on the integer keys that identify a step's tuple of checks (:func:`_grouped`): below int64's range.
KEY_LIMIT = 1 << 62


def build_plans(queries: Sequence[Graph], candidate_sizes: Sequence[Sequence[int]], label_entries: dict[int, int],
                n_data: int, options: MatchOptions,
                less_than: Sequence[tuple[tuple[int, int], ...]]) -> list[QueryPlan]:
    """``[build_plan(q, sizes, label_entries, n_data, options, Constraints(lt)) for q, sizes, lt in zip(queries,
    candidate_sizes, less_than)]``, equal plan for plan (see the module docstring); one entry of
    ``candidate_sizes`` (candidates per query vertex) and of ``less_than`` (symmetry-breaking pairs ``(a, b)``:
    ``f(a) < f(b)``) per query.  Raises ValueError, as ``build_plan`` does, for a query with no vertex or one that
    is not connected."""
    if not len(queries) == len(candidate_sizes) == len(less_than):
        raise ValueError("candidate_sizes and less_than need one entry per query")
    if any(q.n == 0 for q in queries):
        raise ValueError("a query has no vertex")
    plans: list[QueryPlan] = []
    for lo, hi in _chunks([q.n for q in queries]):
        batch = _Padded.of(queries[lo:hi], candidate_sizes[lo:hi])
        order = gsi_orders(batch, label_entries, n_data)
        plans += _plans(batch, order, label_entries, options, less_than[lo:hi])
    return plans


def _chunks(sizes: list[int]) -> Iterable[tuple[int, int]]:
    """Consecutive ``(start, stop)`` ranges of the queries (``sizes``: their vertex counts), each padded to at most
    :data:`CHUNK_CELLS` cells (a query wider than that alone)."""
    lo, width = 0, 0
    for k, n in enumerate(sizes):
        width = max(width, n)
        if k > lo and (k + 1 - lo) * width * width > CHUNK_CELLS:
            yield lo, k
            lo, width = k, n
    if sizes:
        yield lo, len(sizes)


@dataclass(frozen=True)
class _Padded:
    """A chunk of queries padded to ``width`` vertices.  Per-vertex arrays are ``queries x width`` (``valid`` marks
    real vertices); a *cell* is a flat index ``q * width + u`` into them.  Every adjacency entry of the chunk, in
    query order then adjacency order, is one element of the ``entry_*`` arrays: the cells of its vertex and its
    neighbour, and its effective label."""

    queries: Sequence[Graph]
    width: int
    n: np.ndarray              # vertices per query
    valid: np.ndarray
    sizes: np.ndarray          # candidates per vertex (0 on padding)
    degree: np.ndarray         # adjacency entries per vertex (0 on padding)
    flip: np.ndarray           # per query: 1 for directed (an arc's reverse label is e ^ 1), else 0
    entry_from: np.ndarray
    entry_to: np.ndarray
    entry_label: np.ndarray

    @classmethod
    def of(cls, queries: Sequence[Graph], candidate_sizes: Sequence[Sequence[int]]) -> _Padded:
        n = np.array([q.n for q in queries], dtype=np.int64)
        width = int(n.max())
        valid = np.arange(width) < n[:, None]
        sizes = np.zeros(valid.shape, np.int64)
        sizes[valid] = np.fromiter(chain.from_iterable(candidate_sizes), np.int64, int(n.sum()))
        # Every query's indptr in one array: the differences across two queries' boundary are dropped.
        ends = np.cumsum(n + 1)
        per_vertex = np.delete(np.diff(np.concatenate([q.indptr for q in queries])), ends[:-1] - 1)
        degree = np.zeros(valid.shape, np.int64)
        degree[valid] = per_vertex
        cell = np.repeat(np.flatnonzero(valid.reshape(-1)), per_vertex)
        neighbor = np.concatenate([q.neighbors for q in queries])
        return cls(queries, width, n, valid, sizes, degree, np.array([int(q.directed) for q in queries]),
                   cell, cell - cell % width + neighbor, np.concatenate([q.neighbor_labels for q in queries]))

    def entry_counts(self, place: np.ndarray | None = None) -> np.ndarray:
        """``counts[q, a, b]``: adjacency entries of query ``q``'s vertex at place ``a`` towards the one at place
        ``b`` (``place[cell]``: the cell of the vertex's place, by default the vertex's own)."""
        u, w = (self.entry_from, self.entry_to) if place is None else (place[self.entry_from], place[self.entry_to])
        q = len(self.queries)
        return np.bincount(u * self.width + w % self.width, minlength=q * self.width ** 2).reshape(
            q, self.width, self.width)


def _logs(values: np.ndarray, log: Callable[[Any], float]) -> np.ndarray:
    """``log(x)`` of every element, by ``log`` (a Python function, called on Python numbers as gsi_order calls it)
    once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array(list(map(log, distinct.tolist())), dtype=np.float64)[inverse].reshape(values.shape)


def gsi_orders(batch: _Padded, label_entries: dict[int, int], n_data: int) -> np.ndarray:
    """``order[q]``: :func:`~distsm.kernels.order.gsi_order` of query ``q`` (no prefix) in its first ``n[q]``
    entries, padding vertices in place after them.  Raises ValueError for a query that is not connected."""
    q, width = len(batch.queries), batch.width
    # The first vertex: fewest candidates per adjacency entry, then most entries, then smallest id.
    v, _ = _least(batch.valid, batch.sizes / np.maximum(batch.degree, 1), batch.degree)
    log_est = _logs(np.maximum(batch.sizes, 1), math.log)   # log(1) is 0.0, what gsi_order takes for c <= 1
    n2 = float(max(n_data, 1)) ** 2
    selectivity = _logs(batch.entry_label, lambda e: math.log(max(label_entries.get(e, 0), 1) / n2))
    # Rows of the (query, vertex) pairs, so that a level reads each query's placed vertex's row with one take.
    counts = batch.entry_counts()
    add = [slot.reshape(q * width, width) for slot in _selectivity_slots(batch, selectivity, counts)]
    counts = counts.reshape(q * width, width)
    row = np.arange(q) * width
    order = np.zeros((q, width), np.int64)
    best = np.zeros((q, width))
    links = np.zeros((q, width), np.int64)
    for k in range(width):
        if k:
            v, best[:, k] = _least(links > 0, log_est, links)
        order[:, k] = v
        cell = row + v
        log_est.reshape(-1)[cell] = np.inf   # placed: never picked again (it has no self loop to add to it)
        for slot in add:
            log_est += slot.take(cell, axis=0)   # one addition per entry, in gsi_order's order: the same floats
        links += counts.take(cell, axis=0)
    # No linked vertex left to place before the query's last level: it is not connected (gsi_order raises).
    if (np.isinf(best) & batch.valid)[:, 1:].any():
        raise ValueError("the query graph is not connected")
    # A finished query's later picks are meaningless: its padding columns hold the padding vertices.
    return np.where(batch.valid, order, np.arange(width))


def _least(allowed: np.ndarray, estimate: np.ndarray, links: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the allowed column with the least ``(estimate, -links, column)`` and that estimate (inf where no
    column is allowed; the column is then meaningless)."""
    masked = np.where(allowed, estimate, np.inf)
    best = masked.min(axis=1, keepdims=True)
    # Only allowed columns tie with a finite best; argmax takes the first of those with the most links.
    return np.where(masked == best, links, -1).argmax(axis=1), best[:, 0]


def _selectivity_slots(batch: _Padded, selectivity: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """``slots[s][q, v, w]``: the log-selectivity of the ``s``-th adjacency entry of ``v`` towards ``w`` in row
    order (0.0 past the last: adding it changes no estimate; ``counts``: :meth:`_Padded.entry_counts`).  Two
    entries join a pair only in directed queries (an arc each way); each is added in turn so the sums round as
    ``gsi_order``'s."""
    width = batch.width
    key = batch.entry_from * width + batch.entry_to % width
    rank = np.zeros_like(key)
    if counts.max(initial=0) > 1:
        by_pair = np.argsort(key, kind="stable")
        first = np.flatnonzero(np.diff(key[by_pair], prepend=-1))
        rank[by_pair] = np.arange(key.shape[0]) - np.repeat(first, np.diff(first, append=key.shape[0]))
    slots = []
    for s in range(int(rank.max(initial=-1)) + 1):
        slot = np.zeros(counts.size)
        slot[key[rank == s]] = selectivity[rank == s]
        slots.append(slot.reshape(counts.shape))
    return slots


def _plans(batch: _Padded, order: np.ndarray, label_entries: dict[int, int], options: MatchOptions,
           less_than: Sequence[tuple[tuple[int, int], ...]]) -> list[QueryPlan]:
    """The plans of ``batch`` joined in ``order`` (see :func:`build_plans`)."""
    width = batch.width
    rows = np.arange(len(batch.queries))[:, None] * width
    # column[cell]: the cell of the vertex's column (cells of columns: q * width + level).
    column = np.empty(order.size, np.int64)
    column[rows + order] = rows + np.arange(width)
    # Steps are numbered query by query, level by level: step_of[cell] of the cell of query q's level i >= 1.
    base = np.cumsum(batch.n - 1) - (batch.n - 1)
    step_of = (base[:, None] - 1 + np.arange(width)).reshape(-1)
    nsteps = int((batch.n - 1).sum())
    first_col, first_label, checks = _links(batch, column, step_of, nsteps, label_entries)
    distinct, pairs = _column_checks(batch, order, column, step_of, nsteps, options)
    greater, less = _symmetry(batch, column, step_of, nsteps, less_than)
    has_step = batch.valid.copy()
    has_step[:, 0] = False
    # Positional arguments, as build_plan passes them (keywords cost a third of the construction).
    steps = tuple(map(Step, order[has_step].tolist(), first_col, first_label, checks, distinct, pairs, greater, less))
    return [QueryPlan(tuple(o[:n]), steps[lo:lo + n - 1])
            for o, n, lo in zip(order.tolist(), batch.n.tolist(), base.tolist())]


def _grouped(step: np.ndarray, nsteps: int, *parts: np.ndarray) -> Iterable[tuple]:
    """Per step, the tuple of its items, in order: ``parts[0][j]``, or the pair ``(parts[0][j], parts[1][j])``
    with two parts, for each ``j`` with ``step[j]`` that step (``step`` non-decreasing; parts non-negative).

    The steps of light queries repeat few tuples (HPRD's 3000 steps hold about a hundred distinct edge checks), so
    equal tuples are one object, made once from the items of the first step that holds them: a Python object per
    item and per step would cost more than the rest of the plan."""
    if not step.shape[0]:
        return repeat((), nsteps)
    counts = np.bincount(step, minlength=nsteps)
    filled = np.flatnonzero(counts)
    count = counts[filled]
    starts = np.cumsum(count) - count              # of each filled step's items
    code = parts[0] + 1                            # each item as one positive integer
    for part in parts[1:]:
        code = code * (int(part.max()) + 1) + part
    radix = int(code.max()) + 1
    if radix ** int(count.max()) < KEY_LIMIT:
        # A step's items as the digits of one integer: equal keys, equal tuples.
        pos = np.arange(step.shape[0]) - np.repeat(starts, count)
        _, first, inverse = np.unique(np.add.reduceat(code * radix ** pos, starts), return_index=True,
                                      return_inverse=True)
    else:
        first = inverse = np.arange(filled.shape[0])
    # The items of each distinct tuple's first step, one after another.
    length = count[first]
    at = np.repeat(starts[first] - (np.cumsum(length) - length), length) + np.arange(int(length.sum()))
    values = [part[at].tolist() for part in parts]
    items = tuple(values[0]) if len(parts) == 1 else tuple(zip(*values))
    ends = np.cumsum(length)
    made = tuple(map(items.__getitem__, map(slice, (ends - length).tolist(), ends.tolist())))
    which = np.zeros(nsteps, np.int64)
    which[filled] = inverse.reshape(-1) + 1
    return map((((),) + made).__getitem__, which.tolist())


def _links(batch: _Padded, column: np.ndarray, step_of: np.ndarray, nsteps: int,
           label_entries: dict[int, int]) -> tuple[list[int], list[int], Iterable[tuple]]:
    """Per step, the first edge's column and label and the other linking edges ``(column, label)``: the entries of
    the new vertex's row whose neighbour sits in an earlier column, seen from the neighbour (label ``e ^ flip``),
    ranked by the label's data entries, then column, then row position (as ``build_plan`` ranks them)."""
    at, other = column[batch.entry_from], column[batch.entry_to]
    link = np.flatnonzero(other < at)
    at, other = at[link], other[link]
    label = batch.entry_label[link] ^ batch.flip[at // batch.width]
    # The rank of each link's label among the distinct data entry counts: one integer key sorts the links.
    distinct, inverse = np.unique(label, return_inverse=True)
    rarities, rank = np.unique([label_entries.get(e, 0) for e in distinct.tolist()], return_inverse=True)
    step = step_of[at]
    cols = other % batch.width
    key = (step * rarities.shape[0] + rank.reshape(-1)[inverse]) * batch.width + cols
    # A stable sort: links tied on every key (two labels of one data entry count to one neighbour) keep row order.
    ranked = np.argsort(key, kind="stable")
    step, cols, label = step[ranked], cols[ranked], label[ranked]
    first = np.diff(step, prepend=-1) != 0   # every step has a link: its vertex has an earlier neighbour
    rest = ~first
    return cols[first].tolist(), label[first].tolist(), _grouped(step[rest], nsteps, cols[rest], label[rest])


def _column_checks(batch: _Padded, order: np.ndarray, column: np.ndarray, step_of: np.ndarray, nsteps: int,
                   options: MatchOptions) -> tuple[Iterable[tuple], Iterable[tuple]]:
    """Per step, the injectivity columns (earlier columns of the new vertex's label it has no edge to; none for
    homomorphisms) and, induced, the entry-count checks ``(column, count)`` of every earlier column (only the
    unlinked ones in undirected queries), each in column order."""
    # Separate iterators: Step's map draws one item per step from each.
    distinct: Iterable[tuple] = repeat((), nsteps)
    pairs: Iterable[tuple] = repeat((), nsteps)
    if options.homomorphism and not options.induced:
        return distinct, pairs
    width = batch.width
    # by_column[q, i, c]: entries between the vertices of columns i and c; only c < i is read.
    by_column = batch.entry_counts(column)
    earlier = np.tril(np.ones((width, width), bool), -1) & batch.valid[:, :, None]
    if not options.homomorphism:
        labels = np.full(batch.valid.shape, -1, np.int64)
        labels[batch.valid] = np.concatenate([q.vertex_labels for q in batch.queries])
        labels = np.take_along_axis(labels, order, axis=1)
        mask = labels[:, :, None] == labels[:, None, :]
        mask &= earlier
        mask &= by_column == 0
        at = np.flatnonzero(mask)   # (q * width + i) * width + c
        distinct = _grouped(step_of[at // width], nsteps, at % width)
    if options.induced:
        at = np.flatnonzero(earlier & ((by_column == 0) | (batch.flip[:, None, None] == 1)))
        pairs = _grouped(step_of[at // width], nsteps, at % width, by_column.reshape(-1)[at])
    return distinct, pairs


def _symmetry(batch: _Padded, column: np.ndarray, step_of: np.ndarray, nsteps: int,
              less_than: Sequence[tuple[tuple[int, int], ...]]) -> tuple[Iterable[tuple], Iterable[tuple]]:
    """Per step, the columns whose vertex must be smaller than the new one and those whose vertex must be larger:
    each pair ``(a, b)`` of a query's ``less_than`` checks at the later of its two columns, in the pairs' order."""
    count = [len(pairs) for pairs in less_than]
    if not any(count):
        return repeat((), nsteps), repeat((), nsteps)
    row = np.repeat(np.arange(len(less_than)) * batch.width, count)
    a, b = np.array([pair for pairs in less_than for pair in pairs], dtype=np.int64).reshape(-1, 2).T
    ca, cb = column[row + a], column[row + b]
    out = []
    for keep, later, earlier in ((ca < cb, cb, ca), (cb < ca, ca, cb)):
        step = step_of[later[keep]]
        by_step = np.argsort(step, kind="stable")
        out.append(_grouped(step[by_step], nsteps, earlier[keep][by_step] % batch.width))
    return out[0], out[1]
