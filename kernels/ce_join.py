"""Joins over the candidate-edge index: extension sets and the chunked depth-first walk of a core.

An :class:`Extension` says how query vertex ``vertex`` extends a table of partial matches: read the
candidate-edge run of its first link (already inside ``C(vertex)``, so no candidate test), keep the entries
that the other links' data edges confirm (one binary search each), and drop those equal to an unlinked
same-label column (injectivity; linked columns differ anyway, the data graph has no self loops).  The sampler,
the core join and the trailing counter all extend through :func:`extension_set`.

:func:`walk_core` joins the core level by level, depth-first over chunks whose entries fit the memory budget (as
the general driver does), and yields tables of complete core matches.  A backend with a fused extension
(:meth:`Backend.extend_rows` over a :func:`fused_program`: the CuPy backend's ``kernels/cuda/trailing.cu``) grows
each chunk in two passes, counting then writing each row's extensions, instead of the array operations of
:func:`extension_set`; the rows are the same, in the same order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import chunk_ranges
from distsm.kernels.vertex_sets import admits, member, restricted
from distsm.kernels.query_plan import Allowed
from distsm.kernels.records import TrailingProgram
from distsm.kernels.backend import Backend
from distsm.kernels.budget import CORE_ENTRY_BYTES
from distsm.kernels.candidate_edges import CandidateEdges

#: With a progress callback, the first level is cut into at least this many chunks so progress can advance.
PROGRESS_STEPS = 32

@dataclass(frozen=True)
class Extension:
    """How ``vertex`` extends a table: ``links`` ``(column, arc key)`` with the run to read first, and the
    unlinked same-label columns it must differ from."""

    vertex: int
    links: tuple[tuple[int, tuple[int, int, int]], ...]
    distinct_cols: tuple[int, ...]


class CoreOrder(NamedTuple):
    """A core join's order: the ``start`` vertex and the ``steps`` that add the others, one vertex each."""

    start: int
    steps: Sequence[Extension]


def run_lengths(xp: Any, ce: CandidateEdges, table: Any, col: int, arc_key: tuple[int, int, int]) -> tuple[Any, Any]:
    """Start and length of the candidate-edge run of arc ``arc_key`` for each row's vertex in ``col``."""
    offsets = ce.arc(*arc_key).offsets
    return ops.spans(offsets, offsets[1:], ce.position(xp, arc_key[0], table[:, col]))


def run_entries(xp: Any, ce: CandidateEdges, start: Any, counts: Any, arc_key: tuple[int, int, int],
                pick: Any) -> tuple[Any, Any]:
    """``(row, vertex)`` of the entries ``pick`` (indexes into the rows' runs of arc ``arc_key`` laid end to end,
    whose starts and lengths :func:`run_lengths` gave), without laying out the others."""
    inclusive = xp.cumsum(counts)
    row = xp.searchsorted(inclusive, pick, side="right")
    return row, ce.arc(*arc_key).values[start[row] + pick - (inclusive - counts)[row]]


class TableLookups(Protocol):
    """What an extension reads per table besides the index: the runs of a column's vertices through an arc, the
    positions of a column's vertices in their candidates, and an arc's bit matrix (None: none).  A join reads each
    once (:class:`FreshLookups`); the sampler scores many extensions of one table and keeps them, its matrices a byte
    per bit (:class:`~distsm.kernels.sampling.Sampler`)."""

    def spans(self, table: Any, col: int, arc_key: tuple[int, int, int]) -> tuple[Any, Any]: ...

    def position(self, table: Any, col: int, w: int) -> Any: ...

    def matrix(self, arc_key: tuple[int, int, int]) -> Any: ...


@dataclass(frozen=True)
class FreshLookups:
    """:class:`TableLookups` found on every call, over ``ce`` in ``xp``."""

    xp: Any
    ce: CandidateEdges

    def spans(self, table: Any, col: int, arc_key: tuple[int, int, int]) -> tuple[Any, Any]:
        return run_lengths(self.xp, self.ce, table, col, arc_key)

    def position(self, table: Any, col: int, w: int) -> Any:
        return self.ce.position(self.xp, w, table[:, col])

    def matrix(self, arc_key: tuple[int, int, int]) -> Any:
        """The arc's bit matrix (as :func:`~distsm.kernels.vertex_sets.member` reads it) or None."""
        return self.ce.arcs[arc_key].matrix


def extension_set(backend: Backend, ce: CandidateEdges, table: Any, ext: Extension, injective: bool = True,
                  lookups: TableLookups | None = None) -> tuple[Any, Any]:
    """``(row, vertex)``: every extension of every row of ``table`` by ``ext.vertex``, sorted by row then
    vertex.  ``injective=False`` keeps vertices equal to unlinked columns (homomorphisms, raw sets).  ``lookups``
    serves the table's runs and positions and the arcs' matrices (the index's own when None)."""
    xp = backend.xp
    lookups = lookups or FreshLookups(xp, ce)
    col, arc_key = ext.links[0]
    row, x = backend.gather_runs(ce.arc(*arc_key).values, *lookups.spans(table, col, arc_key))
    # The entries are candidates of ext.vertex (runs lie inside them): their positions there are found once for
    # every further link's matrix instead of once per link (CandidateEdges.probe), and need no range check.
    q = ce.position(xp, ext.vertex, x) if len(ext.links) > 1 and ce.positions is not None else None
    for col, other in ext.links[1:]:
        p = lookups.position(table, col, other[0])[row]
        matrix = None if q is None else lookups.matrix(other)
        keep = ce.probe(xp, other, p, x) if matrix is None else member(xp, matrix, ce.bit(other, p, q))
        row, x = row[keep], x[keep]
        if q is not None:
            q = q[keep]
    if injective and ext.distinct_cols and x.shape[0]:
        row, x = _distinct(xp, ce.n, table, ext.distinct_cols, row, x)
    return row, x


#: Past this mean set size an extension finds its entries equal to a distinct column by binary searches (one per row
#: and column), below it by comparing each entry with its row's columns (one gather per column): on NumPy, 1M
#: entries of 100K rows and three columns took 2.6 ms compared against 13.5 ms searched, 10M entries of 10K rows
#: 64 ms against 39 ms.
DISTINCT_SEARCH_MEAN = 256


def _distinct(xp: Any, n: int, table: Any, cols: tuple[int, ...], row: Any, x: Any) -> tuple[Any, Any]:
    """``(row, x)`` (sorted by row then vertex) less the entries equal to their row's image in one of ``cols``."""
    if x.shape[0] <= DISTINCT_SEARCH_MEAN * table.shape[0]:
        # Gathers through take, which NumPy runs faster than fancy indexing of a column.
        keep = table[:, cols[0]].take(row) != x
        for c in cols[1:]:
            keep &= table[:, c].take(row) != x
        return row[keep], x[keep]
    # Only a few entries repeat a distinct column of their row: one binary search per (row, column) finds them in
    # the (row, vertex) keys, and one compaction drops them all.
    key = row.astype(xp.int64, copy=False) * n + x
    taken = (xp.arange(table.shape[0], dtype=xp.int64)[:, None] * n + table[:, list(cols)]).ravel()
    at = xp.minimum(xp.searchsorted(key, taken), key.shape[0] - 1)
    clash = at[key[at] == taken]
    if not clash.shape[0]:
        return row, x
    keep = xp.ones(x.shape[0], dtype=bool)
    keep[clash] = False
    return row[keep], x[keep]


def fused_program(exts: Sequence[Extension], ce: CandidateEdges, injective: bool,
                  groups: Sequence[list[int]] = (), members: Sequence[Sequence[int]] = ()) -> TrailingProgram:
    """The program a fused pass of ``kernels/cuda/trailing.cu`` reads for the extensions ``exts`` over ``ce``.

    Words (int32): ``[length, T, G, start of entry 0 .. T + G - 1, entries...]``: first one entry per extension,
    ``[first link id, links, (column, arc slot) per link, distinct columns, the columns...]`` (link ids number all
    links in order; no distinct columns unless ``injective``), then the ``groups`` entries as given (the trailing
    count's label groups, see :func:`distsm.kernels.trailing.trailing_program`; a group entry starts with its
    size), each of the extensions ``members`` lists (indexes into ``exts``, kept by the program).  The arc slots
    index the program's arcs: per arc its run offsets, values and source lookup."""
    slot: dict[tuple[int, int, int], int] = {}
    for ext in exts:
        for _, arc_key in ext.links:
            slot.setdefault(arc_key, len(slot))
    entries: list[list[int]] = []
    first = 0
    for ext in exts:
        dist = ext.distinct_cols if injective else ()
        words = [first, len(ext.links)]
        for col, arc_key in ext.links:
            words += [int(col), slot[arc_key]]
        entries.append(words + [len(dist), *map(int, dist)])
        first += len(ext.links)
    entries += groups
    starts = itertools.accumulate((len(w) for w in entries[:-1]), initial=3 + len(entries))
    words = [0, len(exts), len(groups), *starts, *itertools.chain.from_iterable(entries)]
    words[0] = len(words)
    positions = ce.positions is not None
    arcs = tuple((ce.arcs[k].offsets, ce.arcs[k].values,
                  ce.positions[k[0]] if ce.positions is not None else ce.candidates[k[0]]) for k in slot)
    serves = {key: i for i, ext in enumerate(exts) for _, key in ext.links}
    return TrailingProgram(np.asarray(words, dtype=np.int32), arcs, positions, first,
                           max((g[0] for g in groups), default=0), tuple(ce.candidates[e.vertex] for e in exts),
                           tuple(serves[key] for key in slot), tuple(tuple(g) for g in members))


def extended(backend: Backend, ce: CandidateEdges, table: Any, ext: Extension, injective: bool,
             program: TrailingProgram) -> Any:
    """``table`` with each row followed by each of its extensions by ``ext`` (``program``: its
    :func:`fused_program`), rows sorted by row then vertex: the backend's fused pass where it has one, else
    :func:`extension_set`."""
    grown = backend.extend_rows(program, table)
    if grown is None:
        row, x = extension_set(backend, ce, table, ext, injective)
        grown = backend.xp.concatenate([table[row], x[:, None].astype(table.dtype)], axis=1)
    return grown


def walk_core(backend: Backend, ce: CandidateEdges, order: CoreOrder, budget: int, injective: bool,
              control: Any = None, level_rows: list[int] | None = None,
              allowed: Mapping[int, Allowed] | None = None) -> Iterator[Any]:
    """Tables of complete matches of ``order`` (columns in its order), chunk by chunk.

    Each level's chunk holds at most ``budget / (levels * CORE_ENTRY_BYTES)`` entries; ``level_rows[i]``, when
    given, accumulates the rows produced at level ``i``.  ``control`` (an engine ``Control``) is checked
    before every chunk and receives progress over the first level's rows.  ``allowed`` (core vertex -> a range
    or sorted array of data ids) keeps only the matches whose images lie there: a slice of the join, cheapest
    when it restricts ``start``."""
    allowed = allowed or {}
    xp = backend.xp
    start, steps = order
    cap = max(budget // ((len(steps) + 1) * CORE_ENTRY_BYTES), 1024)
    programs = [fused_program([ext], ce, injective) for ext in steps]

    def note(level: int, rows: int) -> None:
        if level_rows is not None:
            level_rows[level] += rows

    def descend(table: Any, level: int) -> Iterator[Any]:
        if level == len(steps):
            yield table
            return
        ext = steps[level]
        _, counts = run_lengths(xp, ce, table, *ext.links[0])
        for r0, r1 in chunk_ranges(xp, counts, cap):
            if control is not None:
                control.check()
            part = table[r0:r1]
            grown = extended(backend, ce, part, ext, injective, programs[level])
            if ext.vertex in allowed:
                grown = grown[admits(xp, grown[:, -1], allowed[ext.vertex])]
            note(level + 1, int(grown.shape[0]))
            if grown.shape[0]:
                yield from descend(grown, level + 1)

    first = ce.candidates[start] if start not in allowed else restricted(xp, ce.candidates[start], allowed[start])
    note(0, int(first.shape[0]))
    for a, b in first_level_chunks(int(first.shape[0]), cap, control):
        yield from descend(first[a:b][:, None], 0)


def first_level_chunks(rows: int, chunk: int, control: Any) -> Iterator[tuple[int, int]]:
    """Ranges ``[a, b)`` of a join's first-level rows, ``chunk`` rows at most (at least :data:`PROGRESS_STEPS`
    ranges when ``control`` reports progress).  ``control`` (an engine ``Control``) is checked before each range
    and told the rows done after it."""
    progress = None if control is None else control.progress
    if progress is not None:
        chunk = min(chunk, max(-(-rows // PROGRESS_STEPS), 1))
    for a in range(0, rows, chunk):
        if control is not None:
            control.check()
        b = min(a + chunk, rows)
        yield a, b
        if progress is not None:
            progress(b, rows)
