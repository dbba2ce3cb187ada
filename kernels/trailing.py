"""Counting the trailing vertices of a :class:`~distsm.kernels.count_plan.CountPlan` from set sizes.

Given a table of core matches, each trailing vertex ``j`` gets per row the set ``S_j``: its first link's
candidate-edge run (already inside ``C(j)``), kept where the other links' data edges exist and where it differs
from the core's same-label images.  Trailing vertices are pairwise non-adjacent, so a completion of the row is any
choice of one element per set, injective within each vertex label (sets of different labels are disjoint).  For a
label group ``g`` the number of injective choices is, by inclusion-exclusion over which choices coincide,
``sum over set partitions P of g: mu(P) * prod_{B in P} |intersection of S_j, j in B|`` (for two sets
``|S_a||S_b| - |S_a ∩ S_b|``); groups multiply, and homomorphisms multiply plain set sizes.  So a row's
completions are counted from a few set sizes and intersections, never enumerated one by one.

Sets are materialised as sorted keys ``row * n + vertex``, so an intersection is one binary search per entry of
the smaller set and a size per row is one ``bincount``.  Everything is array-level code over the backend's
``xp``; rows are processed in chunks whose entries fit the memory budget.  Counts are exact: per-row products are
computed in int64 only where a bound shows they cannot overflow, else in Python integers.

A backend may instead count a whole table in one fused pass over a :func:`trailing_program`
(:meth:`Backend.trailing_totals`: the CuPy backend's ``kernels/cuda/trailing.cu`` walks each row's runs and
materialises nothing).  It returns per range of rows an int64 total and the sum of the rows' bounds; ranges whose
bounds reach :data:`SAFE_BOUND` may have overflowed and are recounted here by the array code, so the result stays
exact.  NumPy has no fused pass: this array code is its implementation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from distsm.kernels.array_ops import chunk_ranges
from distsm.kernels.array_ops import bincount, count_true
from distsm.kernels.backend import Backend
from distsm.kernels.budget import CORE_ENTRY_BYTES
from distsm.kernels.candidate_edges import CandidateEdges
from distsm.kernels.ce_join import Extension, extended, extension_set, fused_program, run_lengths
from distsm.kernels.count_plan import CountPlan, blocks_needed, partitions
from distsm.kernels.records import TrailingProgram

#: Sums of per-row bounds below this are computed in int64 (the bound covers every product and partial sum).
SAFE_BOUND = float(1 << 62)


class TrailingCounter:
    """Counts the completions of core-match tables under one :class:`CountPlan` (see the module docstring).

    ``safe`` is the sum of per-row bounds under which products are computed in int64 (tests lower it to
    exercise the exact fallbacks).  ``entries`` and ``words`` are the work explain reports: the set entries the
    array code materialised plus the run entries a fused pass walked, and the bit-row words a pass by bit rows read;
    ``fused_rows`` counts the rows a fused pass counted."""

    def __init__(self, backend: Backend, plan: CountPlan, ce: CandidateEdges, *, homomorphism: bool,
                 budget: int, safe: float = SAFE_BOUND):
        self.backend, self.plan, self.ce = backend, plan, ce
        self.homomorphism = homomorphism
        self.safe = safe
        self.cap = max(budget // CORE_ENTRY_BYTES, 1024)
        self.terms = [partitions(g) for g in plan.groups]
        self.blocks = sorted(blocks_needed(plan.groups), key=len)
        self.entries = 0
        self.words = 0
        self.fused_rows = 0
        self.program = trailing_program(plan, ce, homomorphism)
        self.last = fused_program([plan.steps[-1]], ce, not homomorphism) if plan.steps else None
        self.extended_rows = 0
        self._per_candidate: dict[tuple[int, ...], Any] = {}

    def count(self, table: Any, control: Any = None, extend: bool = False) -> int:
        """Completions of every row of ``table`` (columns in core order), summed (a Python int): by the backend's
        fused pass where it has one, the ranges whose int64 sums may have overflowed recounted exactly.

        ``extend``: ``table`` lacks the core's last column, and each of its rows counts for all its extensions by
        the core's last vertex (``extended_rows`` adds them up).  A backend with :meth:`Backend.extend_pairs`
        gives them as (row, vertex) pairs that the fused pass reads in place: the core's last level is often its
        largest (978M rows of 18 columns for a dense 24-vertex query) and its rows are never copied."""
        if not extend:
            return self._count(table, control)
        assert self.last is not None, "a plan without core steps has no last level to extend"
        last, xp = self.plan.steps[-1], self.backend.xp
        runs = run_lengths(xp, self.ce, table, *last.links[0])[1]
        # Rows written out are bounded by the budget over their columns, as in walk_core; pairs take 8 bytes an
        # extension, so a device's chunks hold the budget's entries (cutting them by the row width too made an
        # 18-column core's chunks 19 times smaller than the pairs need).
        wide = max(self.cap // (int(table.shape[1]) + 1), 1024)
        total = 0
        for a, b in chunk_ranges(xp, runs, self.cap if self.backend.on_device else wide):
            part = table[a:b]
            pairs = self.backend.extend_pairs(self.last, part)
            if pairs is not None:
                self.extended_rows += int(pairs[0].shape[0])
                total += self._count(part, control, pairs)
                continue
            for c, d in chunk_ranges(xp, runs[a:b], wide):
                grown = extended(self.backend, self.ce, part[c:d], last, not self.homomorphism, self.last)
                self.extended_rows += int(grown.shape[0])
                total += self._count(grown, control)
        return total

    def _count(self, table: Any, control: Any, pairs: tuple[Any, Any] | None = None) -> int:
        """:meth:`count` of the core matches ``table`` holds, or (``pairs``) of ``table[parents[k]]`` followed by
        ``xs[k]``."""
        rows = int(table.shape[0] if pairs is None else pairs[0].shape[0])
        if not rows:
            return 0
        if control is not None:
            control.check()
        fused = self.backend.trailing_totals(self.program, table, pairs)
        if fused is None:
            return self.count_arrays(self._matches(table, pairs, 0, rows), control)
        self.entries += fused.entries
        self.words += fused.words
        safe = fused.bounds < self.safe
        total = int(fused.totals[safe].astype(object).sum())
        for i in np.flatnonzero(~safe):
            a, b = int(fused.cuts[i]), int(fused.cuts[i + 1])
            total += self.count_arrays(self._matches(table, pairs, a, b), control)
        self.fused_rows += rows - int(np.sum(np.diff(fused.cuts)[~safe]))
        return total

    def _matches(self, table: Any, pairs: tuple[Any, Any] | None, a: int, b: int) -> Any:
        """Core matches ``a`` to ``b`` as rows."""
        if pairs is None:
            return table[a:b]
        parents, xs = pairs
        return self.backend.xp.concatenate([table[parents[a:b]], xs[a:b, None].astype(table.dtype)], axis=1)

    def count_arrays(self, table: Any, control: Any = None) -> int:
        """:meth:`count` by the array code on any backend, in chunks whose set entries fit the budget."""
        xp = self.backend.xp
        rows = int(table.shape[0])
        work = xp.zeros(rows, dtype=xp.int64)
        for ext in self.plan.trailing:
            work += run_lengths(xp, self.ce, table, *ext.links[0])[1]
        total = 0
        for r0, r1 in chunk_ranges(xp, work, self.cap):
            if control is not None:
                control.check()
            total += self._count_rows(table[r0:r1])
        return total

    def _count_rows(self, table: Any) -> int:
        xp = self.backend.xp
        sizes, inside = [], {}
        for j, ext in enumerate(self.plan.trailing):
            size = self._raw_sizes(table, (j,))
            if not self.homomorphism:
                # S_j excludes the core's images; only unlinked same-label columns can lie in j's raw set.
                for col in ext.distinct_cols:
                    hit = self._contains(table, None, ext, table[:, col])
                    inside[(j, col)] = hit
                    size = size - hit
            sizes.append(size)
            # A core match with an empty set has no completion: the later sets are not read for it, as the fused
            # count stops at a row's first empty set (gMatch's Q_15 on NumPy: 552 -> 163 ms).
            keep = size > 0
            if count_true(keep) < keep.shape[0]:
                table, sizes = table[keep], [s[keep] for s in sizes]
                inside = {key: hit[keep] for key, hit in inside.items()}
                if not table.shape[0]:
                    return 0
        rows = int(table.shape[0])
        if self.homomorphism:
            return self._sum_products([[(1, tuple((j,) for j in range(len(sizes))))]], {}, sizes)
        size_of: dict[tuple[int, ...], Any] = {}
        for block in self.blocks:
            common = self._raw_sizes(table, block)
            for col in sorted({c for j in block for c in self.plan.trailing[j].distinct_cols}):
                hit = xp.ones(rows, dtype=bool)
                for j in block:
                    hit &= inside.get((j, col), False)
                common = common - hit
            size_of[block] = common
        return self._sum_products(self.terms, size_of, sizes)

    def _raw_sizes(self, table: Any, block: tuple[int, ...]) -> Any:
        """Per row of ``table``: the size of the intersection of the raw sets of the trailing vertices in
        ``block`` (one vertex: its raw set)."""
        xp = self.backend.xp
        members = [self.plan.trailing[j] for j in block]
        cols = sorted({c for ext in members for c, _ in ext.links})
        if len(cols) == 1:
            # The sets depend on one core vertex only: sizes per candidate of it, computed once and looked up.
            per_candidate = self._per_candidate.get(block)
            source = members[0].links[0][1][0]
            if per_candidate is None:
                single = [Extension(e.vertex, tuple((0, arc) for _, arc in e.links), ()) for e in members]
                per_candidate = self._intersection_sizes(self.ce.candidates[source][:, None], single)
                self._per_candidate[block] = per_candidate
            return per_candidate[self.ce.position(xp, source, table[:, cols[0]])]
        inv, reps = contiguous_groups(xp, table[:, cols])
        return self._intersection_sizes(table[reps], members)[inv]

    def _intersection_sizes(self, table: Any, members: list[Extension]) -> Any:
        """Per row of ``table``: size of the intersection of the members' raw sets."""
        row, x = self._raw_set(table, members[0])
        for ext in members[1:]:
            keep = self._contains(table, row, ext, x)
            row, x = row[keep], x[keep]
        return bincount(row, int(table.shape[0]))

    def _raw_set(self, sub: Any, ext: Extension) -> tuple[Any, Any]:
        """``(row, vertex)`` pairs of ``ext``'s raw set (its links, before injectivity) for each row of ``sub``."""
        row, x = extension_set(self.backend, self.ce, sub, ext, injective=False)
        self.entries += int(x.shape[0])   # set entries materialised
        return row, x

    def _contains(self, table: Any, row: Any, ext: Extension, x: Any) -> Any:
        """Mask: ``x[i]`` lies in ``ext``'s raw set for row ``row[i]`` of ``table`` (``row`` None: row ``i``)."""
        xp = self.backend.xp
        keep = xp.ones(x.shape[0], dtype=bool)
        for col, arc_key in ext.links:
            p = self.ce.position(xp, arc_key[0], table[:, col])
            keep &= self.ce.probe(xp, arc_key, p if row is None else p[row], x)
        return keep

    def _sum_products(self, terms: list[Any], size_of: dict[tuple[int, ...], Any], sizes: list[Any]) -> int:
        """``sum over rows of prod over groups of sum_P mu(P) prod_B |B's intersection|``, exactly."""
        xp = self.backend.xp

        def block_size(block: tuple[int, ...]) -> Any:
            return sizes[block[0]] if len(block) == 1 else size_of[block]

        # |sum_P mu(P) prod_B| <= |g|! * prod_j |S_j| (the |mu| over partitions sum to |g|!).
        bound = xp.ones(sizes[0].shape[0] if sizes else 0, dtype=xp.float64)
        for g_terms in terms:
            members = {j for _, blocks in g_terms for b in blocks for j in b}
            bound *= math.factorial(len(members))
            for j in members:
                bound *= sizes[j].astype(xp.float64)
        exact_int64 = float(xp.sum(bound)) < self.safe if bound.shape[0] else True
        if exact_int64:
            value = xp.ones(bound.shape[0], dtype=xp.int64)
            for g_terms in terms:
                acc = xp.zeros(bound.shape[0], dtype=xp.int64)
                for coef, blocks in g_terms:
                    prod = xp.full(bound.shape[0], coef, dtype=xp.int64)
                    for b in blocks:
                        prod *= block_size(b)
                    acc += prod
                value *= acc
            return int(xp.sum(value))
        # Beyond int64: Python integers on the host (object arrays), slower but exact.
        host = {b: self.backend.to_host(block_size(b)).astype(object) for g in terms for _, bl in g for b in bl}
        value = np.ones(bound.shape[0], dtype=object)
        for g_terms in terms:
            acc = np.zeros(bound.shape[0], dtype=object)
            for coef, blocks in g_terms:
                prod = np.full(bound.shape[0], coef, dtype=object)
                for b in blocks:
                    prod = prod * host[b]
                acc = acc + prod
            value = value * acc
        return int(value.sum())


def contiguous_groups(xp: Any, keys: Any) -> tuple[Any, Any]:
    """Group runs of equal consecutive rows of ``keys``: ``(group of each row, first row of each group)``.

    Join tables come out grouped by their parent rows, so rows that agree on early columns are mostly
    adjacent: one comparison per row finds the groups without a sort (equal rows that are not adjacent form
    separate groups, which only costs repeated work)."""
    rows = int(keys.shape[0])
    change = xp.ones(rows, dtype=bool)
    if rows > 1:
        change[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    return xp.cumsum(change) - 1, xp.flatnonzero(change)


def trailing_program(plan: CountPlan, ce: CandidateEdges, homomorphism: bool) -> TrailingProgram:
    """``plan``'s trailing count over ``ce`` as a fused pass reads it (see :class:`TrailingProgram`): one
    :func:`~distsm.kernels.ce_join.fused_program` entry per trailing vertex, then one per label group, ``[k, k!, its
    trailing vertices, terms, (coefficient, blocks, each block as a mask over the group's positions) per term]``
    with the terms of :func:`partitions`.  A homomorphism has one group per trailing vertex and no distinct
    columns (its count multiplies set sizes)."""
    groups = [(j,) for j in range(len(plan.trailing))] if homomorphism else [tuple(g) for g in plan.groups]
    entries: list[list[int]] = []
    for g in groups:
        place = {j: i for i, j in enumerate(g)}
        terms = partitions(g)
        words = [len(g), math.factorial(len(g)), *g, len(terms)]
        for coef, blocks in terms:
            words += [coef, len(blocks), *(sum(1 << place[j] for j in b) for b in blocks)]
        entries.append(words)
    return fused_program(plan.trailing, ce, not homomorphism, entries, groups)
