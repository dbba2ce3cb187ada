"""Estimating partial-match counts by sampling walks over the candidate-edge index.

Independence-based estimates (multiply fan-outs and edge probabilities) miss by orders of magnitude on real
graphs, which are skewed and clustered: a vertex reached through an edge has more edges than an average one, and
a neighbour of a neighbour is far likelier to be a neighbour.  Walks see both.  A set of ``walks`` partial
matches is extended level by level (sequential importance resampling, as in WanderJoin-style join sampling): at
each level every walk's extension set is computed exactly (first link's candidate-edge run, other links probed,
injectivity), the level's row estimate is the previous estimate times the mean set size, and the walks are
resampled in proportion to their set sizes and extended by a uniform element.  The estimate is consistent; with a
fixed seed plans are reproducible.  While a level has fewer partial matches than walks, the table holds every one
of them instead, and those levels are estimated exactly.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels import array_ops as ops
from distsm.kernels.array_ops import count_true
from distsm.kernels.budget import MAX_WALKS
from distsm.kernels.candidate_edges import CandidateEdges
from distsm.kernels.ce_join import Extension, extension_set, run_entries, run_lengths
from distsm.kernels.order import query_adjacency

if TYPE_CHECKING:
    from distsm.kernels.records import Control



class Sampler:
    """Sampled level estimates of join orders of one query over its :class:`CandidateEdges`."""

    def __init__(self, backend: Backend, query: Graph, ce: CandidateEdges, *, homomorphism: bool,
                 walks: int = MAX_WALKS, seed: int = 0, control: Control | None = None):
        self.backend, self.query, self.ce = backend, query, ce
        # Large queries are sampled for seconds: a cancelled count stops at the next evaluation.
        self.control = control
        self.homomorphism = homomorphism
        self.walks = self.most_walks = walks
        self.seed = seed
        self.adj = query_adjacency(query)
        self.labels = [int(x) for x in query.vertex_labels]
        self.near = [frozenset(w for w, _ in arcs) for arcs in self.adj]
        # Per vertex, the other vertices of its label (those an injective extension must differ from).
        self.same_label = [[w for w in range(query.n) if w != u and self.labels[w] == self.labels[u]]
                           for u in range(query.n)]
        self.evaluations = 0
        # Per order prefix: the walks after it and the generator's state then; per (prefix, next vertex): its
        # score (mean set size, Extension, work per row).  See core_order.
        self._walks: dict[tuple[int, ...], tuple[Any, Any]] = {}
        self._scores: dict[tuple[tuple[int, ...], int], tuple[float, Extension, float]] = {}
        # Per walk table (held, so its id is not reused while kept): its columns' positions in their vertices'
        # candidates and its runs and their total length per (column, arc), read by every vertex scored after it
        # and every trailing set estimated over it.
        self._runs: dict[int, tuple[Any, dict[Any, Any]]] = {}
        self._lengths: dict[tuple[int, int, int], Any] = {}  # per arc, its runs' lengths
        # Per arc, its bit matrix a byte per bit (one gather a probe instead of a word's shifts and masks), while
        # they fit UNPACKED_BYTES in all.
        self._matrices: dict[tuple[int, int, int], Any] = {}
        self._unpacked = 0

    def draw(self, walks: int) -> None:
        """Draw ``walks`` walks from now on (at most those the sampler was made with); the walks and scores kept per
        order prefix are dropped with the old count, and evaluations go on counting."""
        walks = min(walks, self.most_walks)
        if walks != self.walks:
            self.walks = walks
            self._walks.clear()
            self._scores.clear()
            self._runs.clear()

    def arc_from(self, w: int, u: int, e_from_u: int) -> tuple[int, int, int]:
        return (w, u, e_from_u ^ 1 if self.query.directed else e_from_u)

    def extension(self, table: Any, cols: dict[int, int], u: int) -> tuple[Extension, float]:
        """``u``'s :class:`Extension` from the placed vertices ``cols`` (vertex -> column), the link whose runs
        are shortest over the walks first, and that mean run length (links in query order and 0.0 when
        ``table`` is None: no walks left to rank them by)."""
        links: list[Any] = []
        for w, e in self.adj[u]:
            if w in cols:
                arc = self.arc_from(w, u, e)
                mean = 0.0
                if table is not None:
                    mean = self.total(table, cols[w], arc) / int(table.shape[0])
                links.append((mean, len(links), cols[w], arc))
        links.sort()
        linked = {c for _, _, c, _ in links}
        distinct = () if self.homomorphism else tuple(
            sorted(c for w in self.same_label[u] if (c := cols.get(w)) is not None and c not in linked))
        return Extension(u, tuple((c, arc) for _, _, c, arc in links), distinct), links[0][0]

    def core_order(self, core: frozenset[int], start: int, fixed: Sequence[int] | None = None) -> SampledOrder:
        """Greedy order of ``core`` from ``start``, each next vertex the one with the fewest estimated rows (scored
        lazily: :meth:`_next`); or the order ``fixed`` (``start`` first, each vertex linked to one before it),
        sampled level by level all the same.

        Every order draws from a generator seeded with :attr:`seed`, so the walks after a given prefix of an
        order, and the scores of the vertices that may follow it, are the same in every order that shares the
        prefix: they are kept per prefix and reused (each reuse still counts as an evaluation)."""
        rng = np.random.default_rng(self.seed)
        cands = self.ce.candidates[start]
        prefix: tuple[int, ...] = (start,)
        table = self._walks_after(prefix, rng, partial(self._first, rng, cands))
        cols = {start: 0}
        out = SampledOrder([start], [float(cands.shape[0])], [], [0.0], [table])
        last: dict[int, float] = {}  # each vertex's mean set size when last scored in this order (see _next)
        while len(out.order) < len(core):
            if fixed is None:
                best, best_found = self._next(prefix, table, cols, core, last)
            elif any(w in cols for w, _ in self.adj[fixed[len(cols)]]):
                best, best_found = self._score(prefix, table, cols, fixed[len(cols)])
            else:
                raise ValueError("the query graph is not connected")
            mean, ext, work = best
            prefix += (ext.vertex,)
            rows, found_set = (table, None) if best_found is None else best_found
            table = self._walks_after(prefix, rng, partial(self._resampled, rng, rows, ext, found_set))
            out.order.append(ext.vertex)
            out.steps.append(ext)
            out.estimates.append(out.estimates[-1] * mean)
            out.step_work.append(work)
            out.walks.append(table)
            cols[ext.vertex] = len(cols)
            if table is None:
                while len(out.order) < len(core):
                    u = min(v for v in core - set(out.order) if any(w in cols for w, _ in self.adj[v]))
                    ext, _ = self.extension(None, cols, u)
                    out.order.append(u)
                    out.steps.append(ext)
                    out.estimates.append(0.0)
                    out.step_work.append(0.0)
                    out.walks.append(None)
                    cols[u] = len(cols)
        return out

    def _next(self, prefix: tuple[int, ...], table: Any, cols: dict[int, int], core: frozenset[int],
              last: dict[int, float]) -> tuple[tuple[float, Extension, float], Any]:
        """The score (:meth:`_score`) of the vertex of ``core`` with the fewest estimated rows after ``prefix``.

        Scored lazily: a vertex scored at an earlier level whose links the last placed vertex did not change keeps
        its mean set size from then (``last``); kept scores are scored again, least first, while they are within
        :data:`STALE_MARGIN` of the least fresh one.  Scoring every vertex that may follow at every level took nine
        tenths of a 32-vertex query's planning, and a kept score moves little where no link changed."""
        placed = prefix[-1]
        fresh: dict[int, tuple[tuple[float, Extension, float], Any]] = {}
        heap = []
        for u in sorted(core - cols.keys()):
            near = self.near[u]
            if near.isdisjoint(cols):
                continue
            if u not in last or placed in near:
                fresh[u] = self._score(prefix, table, cols, u)
                last[u] = fresh[u][0][0]
            heap.append((last[u], u))
        if not heap:
            raise ValueError("the query graph is not connected")
        heapq.heapify(heap)
        best = None
        while heap:
            kept, u = heapq.heappop(heap)
            if best is not None and kept > STALE_MARGIN * best[0]:
                break
            if u not in fresh:
                fresh[u] = self._score(prefix, table, cols, u)
                last[u] = fresh[u][0][0]
                if heap and last[u] > heap[0][0]:
                    heapq.heappush(heap, (last[u], u))
                    continue
            if best is None or (last[u], u) < best:
                best = (last[u], u)
        assert best is not None
        return fresh[best[1]]

    def _score(self, prefix: tuple[int, ...], table: Any, cols: dict[int, int],
               u: int) -> tuple[tuple[float, Extension, float], Any]:
        """``((mean set size, Extension, work per row), sets)`` of placing ``u`` after ``prefix`` (whose walks are
        ``table``, its vertices' columns ``cols``); ``sets`` the extension sets read to size them, or None (kept
        per prefix: a reused score comes without them)."""
        self._evaluated()
        scored, found = self._scores.get((prefix, u)), None
        if scored is None:
            ext, first_mean = self.extension(table, cols, u)
            if len(ext.links) == 1 and not ext.distinct_cols:
                # The sets are the link's runs: their mean size is the mean run length, and their entries are read
                # only if this vertex is chosen, and then only the resampled ones.
                mean = first_mean
            else:
                mean, scored_rows, sets = self._scored_set(table, ext, first_mean)
                found = (scored_rows, sets)
            # Every further link costs a probe per entry read (see CandidateEdges.probe), every unlinked same-label
            # column a comparison that compacts the entries like a probe does.
            scored = (mean, ext, first_mean * (1 + PROBE_COST * (len(ext.links) - 1) +
                                               DISTINCT_COST * len(ext.distinct_cols)))
            self._scores[(prefix, u)] = scored
        return scored, found

    def walk(self, start: int, steps: list[Extension]) -> Any:
        """The walks after joining ``[start] + steps`` (a fixed order, e.g. a chosen plan's core), one row per walk
        and a column per vertex in that order; None when no walk survives.  Resampling in proportion to the set
        sizes leaves the walks spread about uniformly over the order's complete matches, so the walks through a
        vertex image estimate its share of the join."""
        rng = np.random.default_rng(self.seed)
        table = self._first(rng, self.ce.candidates[start])
        for ext in steps:
            self._evaluated()
            table = self._resampled(rng, table, ext, None)
            if table is None:
                return None
        return table

    def _scored_set(self, table: Any, ext: Extension, first_mean: float) -> tuple[float, Any, Any]:
        """``(mean size, rows, sets)``: the mean size of the extension sets of ``ext`` over ``rows``, every row of
        ``table`` or, where their first links' runs hold more than :data:`SCORED_ENTRIES` entries, every k-th row
        (at least :data:`SCORED_ROWS` of them): a systematic sample of the walks, whose mean set size estimates
        theirs, and whose sets (``(row, vertex)``) are what the walks are then resampled from.

        The sets of one link less the vertices of same-label columns are sized without being read (``sets``
        None: read only if this vertex is chosen): a run holds each vertex once, so a set is its run less the
        columns whose vertex lies in it, one probe per row and column."""
        xp = self.backend.xp
        rows = int(table.shape[0])
        stride = max(min(int(rows * first_mean) // SCORED_ENTRIES, rows // SCORED_ROWS), 1)
        if stride > 1:
            table = table[::stride]
        if len(ext.links) == 1:
            col, arc = ext.links[0]
            if stride > 1:
                entries = int(xp.sum(run_lengths(xp, self.ce, table, col, arc)[1]))
                at = self.ce.position(xp, arc[0], table[:, col])
            else:
                entries, at = self.total(table, col, arc), self.position(table, col, arc[0])
            clashes = 0
            if ext.distinct_cols:
                # Every same-label column in one probe (row-major: each row's columns side by side).
                others = table[:, list(ext.distinct_cols)]
                clashes = count_true(self.ce.probe(xp, arc, xp.repeat(at, others.shape[1]), others.ravel(),
                                                   self.matrix(arc)))
            return (entries - clashes) / int(table.shape[0]), table, None
        found = extension_set(self.backend, self.ce, table, ext, not self.homomorphism, None if stride > 1 else self)
        return float(found[1].shape[0]) / int(table.shape[0]), table, found

    def position(self, table: Any, col: int, w: int) -> Any:
        """Positions of ``table``'s column ``col`` (images of ``w``) in ``w``'s candidates, kept with the table as
        int64: they index runs, lengths and matrices, and NumPy converts an int32 index on every gather."""
        kept = self._kept(table)
        at = kept.get(col)
        if at is None:
            xp = self.backend.xp
            at = kept[col] = self.ce.position(xp, w, table[:, col]).astype(xp.int64, copy=False)
        return at

    def total(self, table: Any, col: int, arc: tuple[int, int, int]) -> int:
        """The summed length of the runs of ``arc`` of ``table``'s column ``col`` (the entries its first link reads;
        over the rows, a link's mean fan-out), kept with the table."""
        kept = self._kept(table)
        got = kept.get(("total", col, arc))
        if got is None:
            lengths = self._lengths.get(arc)
            if lengths is None:
                offsets = self.ce.arc(*arc).offsets
                lengths = self._lengths[arc] = offsets[1:] - offsets[:-1]
            got = kept[("total", col, arc)] = int(ops.take(lengths, self.position(table, col, arc[0])).sum())
        return got

    def spans(self, table: Any, col: int, arc: tuple[int, int, int]) -> tuple[Any, Any]:
        """Start and length of the runs of ``arc`` of ``table``'s column ``col``
        (:func:`~distsm.kernels.ce_join.run_lengths`), kept with the table: the sampler is its extension sets'
        :class:`~distsm.kernels.ce_join.TableLookups`."""
        kept = self._kept(table)
        got = kept.get(("spans", col, arc))
        if got is None:
            offsets = self.ce.arc(*arc).offsets
            got = kept[("spans", col, arc)] = ops.spans(offsets, offsets[1:], self.position(table, col, arc[0]))
        return got

    def matrix(self, arc: tuple[int, int, int]) -> Any:
        """``arc``'s bit matrix a byte per bit while :data:`UNPACKED_BYTES` allow, else as the index holds it."""
        if arc not in self._matrices:
            got = words = self.ce.arcs[arc].matrix
            if words is not None and self._unpacked + 32 * int(words.shape[0]) <= UNPACKED_BYTES:
                xp = self.backend.xp
                got = xp.unpackbits(words.view(xp.uint8), bitorder="little").view(bool)
                self._unpacked += int(got.shape[0])
            self._matrices[arc] = got
        return self._matrices[arc]

    def _kept(self, table: Any) -> dict[Any, Any]:
        entry = self._runs.get(id(table))
        if entry is None:
            entry = self._runs[id(table)] = (table, {})
        return entry[1]

    def _evaluated(self) -> None:
        self.evaluations += 1
        if self.control is not None:
            self.control.check()

    def _walks_after(self, prefix: tuple[int, ...], rng: np.random.Generator, make: Callable[[], Any]) -> Any:
        """The walks after the order prefix ``prefix``: ``make()`` (which draws from ``rng``) the first time,
        later the same walks, with ``rng`` put back where ``make`` left it."""
        kept = self._walks.get(prefix)
        if kept is None:
            kept = self._walks[prefix] = (make(), rng.bit_generator.state)
        else:
            rng.bit_generator.state = kept[1]
        return kept[0]

    def _first(self, rng: np.random.Generator, cands: Any) -> Any:
        """The walks' first column over the start vertex's candidates ``cands``: each candidate once where there are
        fewer than :attr:`walks` (see :meth:`_resampled`), else :attr:`walks` of them drawn uniformly."""
        xp = self.backend.xp
        n = int(cands.shape[0])
        return (cands if n < self.walks else cands[xp.asarray(rng.integers(0, n, size=self.walks))])[:, None]

    def _resampled(self, rng: np.random.Generator, table: Any, ext: Extension, found: Any) -> Any:
        """``table`` extended by ``ext``: its extension sets (``found``, or None: to be read) resampled in
        proportion to their sizes (None when every set is empty).

        A table of fewer than :attr:`walks` rows holds every partial match of its prefix (no level before it had
        more): while the extensions are fewer than :attr:`walks` too they are all kept, so a small query's early
        levels are estimated exactly and over fewer rows (a 12-vertex query of gMatch's suite has 42-230 partial
        matches per level there, against 1024 walks)."""
        xp = self.backend.xp
        if found is None and (len(ext.links) > 1 or ext.distinct_cols):
            found = extension_set(self.backend, self.ce, table, ext, not self.homomorphism, self)
        if found is None:
            (start, counts), entries = self.spans(table, *ext.links[0]), self.total(table, *ext.links[0])
        else:
            entries = int(found[1].shape[0])
        if not entries:
            return None  # no walk extends: estimates are zero from here on
        if int(table.shape[0]) < self.walks and entries < self.walks:
            pick = xp.arange(entries)
        else:
            # Resample in proportion to set sizes = pick uniform entries of the flattened sets.
            pick = xp.asarray(rng.integers(0, entries, size=self.walks))
        if found is None:
            row, x = run_entries(xp, self.ce, start, counts, ext.links[0][1], pick)
        else:
            row, x = found[0].take(pick), found[1].take(pick)
        # Row gathers through take and one preallocated table: fancy indexing and a concatenation cost twice as
        # much on tables of a few hundred walks.
        out = xp.empty((int(row.shape[0]), int(table.shape[1]) + 1), dtype=table.dtype)
        out[:, :-1] = table.take(row, axis=0)
        out[:, -1] = x
        return out

    def trailing(self, table: Any, cols: dict[int, int], vertices: list[int],
                 groups: list[list[int]]) -> tuple[float, list[Extension]]:
        """Estimated work per core match of counting the trailing ``vertices`` (set entries read and probed,
        block intersections of each label group, per-row terms) and their :class:`Extension` s."""
        work, out, exts = 0.0, [], {}
        if self.control is not None:
            self.control.check()
        for j in vertices:
            ext, mean = self.extension(table, cols, j)
            links = len(ext.links)
            work += set_work(links, mean) + len(ext.distinct_cols) * links * PROBE_COST
            exts[j] = (ext, mean)
            out.append(ext)
        for g in groups:
            for size in range(2, len(g) + 1):
                for block in itertools.combinations(g, size):
                    sources = {c for j in block for c, _ in exts[j][0].links}
                    work += 1 if len(sources) == 1 else exts[block[0]][1] * sum(len(exts[j][0].links) for j in block)
            work += BELL[len(g)]
        return work, out


@dataclass
class SampledOrder:
    """A sampled greedy order: per level the estimated rows, the join step, the estimated work per row of the
    previous level (entries read times links), and the walks after it (None once none survive)."""

    order: list[int]
    estimates: list[float]
    steps: list[Extension]
    step_work: list[float]
    walks: list[Any]

    def cost(self, k: int) -> float:
        """Estimated work of joining the first ``k`` levels: entries read and probed, and rows written (a row
        of level ``i`` has ``i + 1`` columns)."""
        return sum(e * (i + 1) * WRITE_COST for i, e in enumerate(self.estimates[:k])) + \
            sum(self.estimates[i - 1] * self.step_work[i] for i in range(1, k))

    def columns(self, k: int) -> dict[int, int]:
        return {u: i for i, u in enumerate(self.order[:k])}


def set_work(links: int, run: Any) -> Any:
    """The work of one trailing vertex's set for a core match whose first link's run is ``run`` entries long (a
    number, or an array of them): a set hanging off one core vertex is sized by a lookup (see
    :class:`~distsm.kernels.trailing.TrailingCounter`), others read the run and probe it in the other links."""
    return 1 if links == 1 else run * (1 + PROBE_COST * (links - 1))


#: The entries an evaluated extension reads at most (the runs of its first link), unless that leaves it fewer than
#: SCORED_ROWS walks: on NumPy one set costs about 8 us per thousand entries and a table's walks may read 80,000
#: (gMatch's Q_8, a third of its planning).
SCORED_ENTRIES = 1 << 14
#: A vertex's kept score (see Sampler._next) is scored again while it is at most this many times the least fresh
#: score of its level: with it, the plans of the 33 planned queries of gMatch's suite and the generated dense suites
#: and of 300 random planning cases were those of scoring every vertex (with scoring only the least kept score again,
#: one 32-vertex query's plan was estimated 2.6 times dearer and counted four times slower), with a third fewer
#: scored extensions.
STALE_MARGIN = 2.0
SCORED_ROWS = 256
#: Bytes of bit matrices the sampler unpacks to a byte per bit (a dense 32-vertex HPRD query's take 0.55 MB).
UNPACKED_BYTES = 16 << 20
#: Cost of probing one entry against one further link, in units of entries read.
PROBE_COST = 4
#: Cost of checking one entry against one unlinked same-label column (a gather, a comparison, a compaction).
DISTINCT_COST = 1
#: Cost of writing one column of one partial match (rows are copied whole at each level).
WRITE_COST = 3

#: Set partitions of n elements (inclusion-exclusion terms per row of a label group).
BELL = (1, 1, 2, 5, 15, 52, 203, 877)
