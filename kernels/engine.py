"""The join driver: filter, plan, then vertex-at-a-time extension under a memory budget.

The driver is the same for every backend.  Per level it asks the backend for the rows' output bounds (one
prefix sum: every row's slice of one preallocated output space, Prealloc-Combine) and extends the table through
that space in chunks no larger than the level's share of the budget.  Chunks are finished depth-first, so the
tables alive at any moment are one chunk per level: memory stays bounded however many matches exist.  Counting
never materialises the last level; listing yields host arrays chunk by chunk.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.config import engine_options
from distsm.graph import Graph
from distsm.kernels import candidate_edges
from distsm.kernels.array_backend import Allowed, restricted
from distsm.kernels.backend import Backend
from distsm.kernels.ce_join import first_level_chunks, walk_core
from distsm.kernels.count_plan import plan_count
from distsm.kernels.explain import Explanation
from distsm.kernels.index import DataIndex
from distsm.kernels.order import OrderFunction, gsi_order
from distsm.kernels.query_plan import MatchOptions, QueryPlan, build_plan
from distsm.kernels.sampling import Sampler, walks_for
from distsm.kernels.trailing import TrailingCounter

#: A chunk never shrinks below this many output entries, whatever the budget (keeps tiny budgets finite).
MIN_CHUNK_ENTRIES = 64



class JoinCancelled(Exception):
    """Raised inside :func:`walk` when its :class:`Control` says the caller no longer wants the result."""


class HeavyQuery(Exception):
    """Raised by :func:`count` given ``split_work`` when the query's counting plan is estimated at that much work or
    more (or its candidate-edge index would not fit the budget): the caller splits the query into slices instead of
    counting it alone."""


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


def default_cpu_budget() -> int:
    """A quarter of physical memory, capped at 4 GiB."""
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        phys = 8 << 30
    return int(min(4 << 30, phys // 4))


def entry_bytes(columns: int) -> int:
    """Bytes one output entry of a level with ``columns`` columns may occupy, temporaries included."""
    return 88 + 8 * columns


@dataclass
class PreparedQuery:
    """A query filtered and planned against one data graph."""

    index: DataIndex
    plan: QueryPlan
    candidates: list[Any]
    bits: list[Any]


def prepare(backend: Backend, data: Graph | DataIndex, query: Graph, options: MatchOptions, *,
            less_than: tuple[tuple[int, int], ...] = (), restrict: Mapping[int, Allowed] | None = None,
            order_function: OrderFunction = gsi_order, prime_edge: int | None = None,
            spanning_only: bool = False, candidates: list[Any] | None = None) -> PreparedQuery | None:
    """Filter candidates and plan the join; None when some query vertex has no candidate (no match).

    ``data`` may be a graph or an already built index (e.g. a memory-mapped one).  ``prime_edge`` plans a
    spanning search (see :class:`~distsm.kernels.query_plan.PrimeEdge`); ``spanning_only`` a join that keeps
    only matches spanning two or more parts.  ``candidates`` reuses the filter's output of an earlier call for
    the same query and data (``restrict`` still applies).
    """
    if isinstance(data, Graph):
        check_pair(data, query)
        idx = backend.index(data)
    else:
        idx = data
    if candidates is None:
        cands = backend.candidates(idx, query, homomorphism=options.homomorphism, restrict=restrict)
    else:
        cands = list(candidates)
        for u, allowed in (restrict or {}).items():
            cands[u] = restricted(backend.xp, cands[u], allowed)
    sizes = [int(c.shape[0]) for c in cands]
    if min(sizes) == 0:
        return None
    plan = build_plan(query, sizes, idx.label_entries, idx.n, options, less_than, order_function, prime_edge,
                      spanning_only)
    bits = [None if u == plan.order[0] else backend.bitset(idx, c) for u, c in enumerate(cands)]
    return PreparedQuery(idx, plan, cands, bits)


def start_order(index: DataIndex, query: Graph, options: MatchOptions, candidates: list[Any],
                less_than: tuple[tuple[int, int], ...] = (), spanning_only: bool = False,
                order_function: OrderFunction = gsi_order) -> tuple[int, ...]:
    """The order in which an unrestricted join of ``query`` visits its vertices."""
    sizes = [int(c.shape[0]) for c in candidates]
    plan = build_plan(query, sizes, index.label_entries, index.n, options, less_than, order_function, None,
                      spanning_only)
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


def walk(backend: Backend, prepared: PreparedQuery, budget: int, count_only: bool,
         spanning: Any = None, stats: dict[str, int] | None = None, adjacency: Any = None,
         control: Control | None = None) -> Iterator[Any]:
    """Yield, chunk by chunk, survivor counts (``count_only``) or device tables of complete matches.

    Table columns follow ``prepared.plan.order``.  ``spanning`` (a backend ``Spanning``) is required exactly
    when the plan filters by partition.  ``stats``, when given, accumulates ``"partial"`` (partial matches
    produced at every level, the work measure PBE reports), ``"gathered"`` (adjacency entries read) and
    ``"level<i>"`` (rows produced whose last column is ``plan.order[i]``).
    ``adjacency`` (a :class:`~distsm.kernels.gather.HostAdjacency` whose core is ``prepared.index``) serves
    every level's adjacency in pieces gathered from host memory instead of the resident index.  ``control``
    cancels the join between chunks and receives progress (see :class:`Control`).
    """
    plan, idx = prepared.plan, prepared.index
    if plan.needs_partition != (spanning is not None):
        raise ValueError("a spanning search needs both a spanning plan and the partition assignment")
    extra = {} if spanning is None else {"spanning": spanning}
    nq = len(plan.order)
    level_budget = max(budget // nq, 1)

    def pieces(table: Any, step: Any) -> Iterator[tuple[Any, DataIndex]]:
        if adjacency is None:
            yield table, idx
        else:
            yield from adjacency.pieces(table, step)

    # A fused descent keeps two tables of at most this many rows (and nq columns) plus one level's workload:
    # under one level's share of the budget, like the chunks of the level-by-level path.
    fused_cap = max(level_budget // entry_bytes(nq), MIN_CHUNK_ENTRIES)

    def descend(table: Any, level: int) -> Iterator[Any]:
        if level == nq:
            yield table.shape[0] if count_only else table
            return
        work = None
        if adjacency is None:
            run = backend.descend(idx, table, level, plan, prepared.bits, count_only, fused_cap, **extra)
            if run is not None:
                if stats is not None:
                    stats["partial"] = stats.get("partial", 0) + sum(s for _, s in run.levels)
                    stats["gathered"] = stats.get("gathered", 0) + sum(e for e, _ in run.levels)
                    for k, (_, survivors) in enumerate(run.levels):
                        note_level(level + k, survivors)
                if run.level == nq:
                    if count_only:
                        yield run.count
                    elif run.count:
                        yield run.table
                    return
                table, level, work = run.table, run.level, run.workload
        step = plan.steps[level - 1]
        for piece, piece_idx in pieces(table, step):
            yield from extend_level(piece, piece_idx, level, step, work)

    def extend_level(table: Any, idx: DataIndex, level: int, step: Any, work: Any = None) -> Iterator[Any]:
        delta, offsets, total = work if work is not None else backend.workload(idx, table, step)
        last = level == nq - 1
        chunk = max(level_budget // entry_bytes(level + 1), MIN_CHUNK_ENTRIES)
        bits = prepared.bits[step.vertex]
        for a in range(0, total, chunk):
            if control is not None:
                control.check()
            b = min(a + chunk, total)
            out = backend.extend(idx, table, step, delta, offsets, a, b, bits, count_only and last, **extra)
            if stats is not None:
                survivors = int(out) if count_only and last else int(out.shape[0])
                stats["partial"] = stats.get("partial", 0) + survivors
                stats["gathered"] = stats.get("gathered", 0) + (b - a)
                note_level(level, survivors)
            if last:
                yield out
            elif out.shape[0]:
                yield from descend(out, level + 1)

    def note_level(columns: int, rows: int) -> None:
        assert stats is not None  # called only when stats are asked for
        key = f"level{columns}"
        stats[key] = stats.get(key, 0) + rows

    first = prepared.candidates[plan.order[0]]
    if stats is not None:
        stats["partial"] = stats.get("partial", 0) + int(first.shape[0])
        note_level(0, int(first.shape[0]))
    chunk0 = max(level_budget // entry_bytes(1), MIN_CHUNK_ENTRIES)
    for a, b in first_level_chunks(int(first.shape[0]), chunk0, control):
        yield from descend(first[a:b][:, None], 1)


COUNT_PATHS = ("auto", "general", "trailing")

#: On a device backend the filter runs on the host when the query's label pools hold at most this many data
#: vertices in all (one pass over them costs less there than the device's launches and transfers).
HOST_FILTER_VERTICES = 1 << 16


class CountShare:
    """What the slices of one count share on one site (thread-safe; :func:`count` fills it in on first use).

    Slices of a count restrict the images of one query vertex, ``anchor``, to disjoint id ranges (a heavy image
    may be split further by the ids of a second vertex).  Without a share every slice filters, refines and plans
    its restricted query from scratch.  With one, the query is filtered once, and once a slice's trial join
    passes its allowance, refined and planned once, unrestricted, with its core join starting at ``anchor``: each
    slice then joins only its range of the anchor's refined candidates.  Slices still run their own trials, so a
    light slice never pays for refinement.
    """

    def __init__(self, anchor: int):
        self.anchor = anchor
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}

    def get(self, key: str, build: Callable[[], Any]) -> Any:
        # Builds run under the lock: slices arriving together on a worker's threads build once.
        with self._lock:
            if key not in self._values:
                self._values[key] = build()
            return self._values[key]


def count(backend: Backend, data: Graph | DataIndex, query: Graph, options: MatchOptions, *, budget: int,
          less_than: tuple[tuple[int, int], ...] = (), restrict: Mapping[int, Allowed] | None = None,
          control: Control | None = None, automorphisms: int | None = None,
          explain: Explanation | None = None, path: str = "auto", trailing: frozenset[int] | None = None,
          host_index: DataIndex | None = None, share: CountShare | None = None, split_work: float | None = None,
          trial: bool = True) -> int:
    """Number of matches (a Python int).

    A count first tries the general join under an allowance of adjacency entries (a *trial*): light queries
    finish there and never pay the candidate-edge index and the planner.  A trial that passes its allowance is
    stopped, and the query is counted by a core join plus trailing vertices counted from set sizes (see
    :mod:`distsm.kernels.count_plan`).  The allowance is ``distsm.engine.trial-entries`` per query vertex or,
    when larger, the adjacency entries refinement would scan times ``distsm.engine.trial-ratio-host``
    (``-device`` for a trial on a device), so a trial never costs much more than the refinement and planning it
    may save.  On a device backend small queries get a first trial on the host (see :func:`_trials`).

    ``less_than`` (symmetry breaking for unique subgraphs) is honoured either by the general join or, given
    ``automorphisms`` (``|Aut(Q)|``), by counting every embedding and dividing.  ``explain`` is filled in with the
    path taken, the trials, the order, estimated and actual partial matches per level and the time per stage.
    ``path`` forces ``"general"`` or ``"trailing"`` (where the semantics allow it; no trial) instead of the
    ``"auto"`` choice; ``trailing`` then forces the trailing vertices too (tests of the inclusion-exclusion use
    it).  ``host_index`` is a host (NumPy) index of the same graph when ``data`` is an index on a device (e.g. a
    worker's memory map of it): light work and planning then run on the host, as they do when ``data`` is a graph.
    ``share`` (with ``restrict`` on its anchor: a slice of a count) reuses what other slices of the same count
    filtered, refined and planned (see :class:`CountShare`).  ``split_work`` raises :class:`HeavyQuery` for a query
    past its trials whose counting plan is estimated at ``split_work`` or more: a cluster worker then splits it.
    ``trial=False`` skips the trials (the slices of a query already found heavy).
    """
    if path not in COUNT_PATHS:
        raise ValueError(f"path must be one of {', '.join(map(repr, COUNT_PATHS))}, got {path!r}")
    clock = _Clock(backend, explain)
    # Planning, refinement and light work run on the host (a device's launch latency would dominate them), with
    # the host's own index of the graph; a prebuilt index (e.g. shared by a worker) has no host twin.
    if isinstance(data, Graph):
        check_pair(data, query)
        idx = backend.index(data)
        host = backend.host()
        host_idx = host.index(data)
    else:
        idx = data
        host, host_idx = (backend.host(), host_index) if host_index is not None else (backend, data)
    filter_on = host if host is not backend and _pool_vertices(host_idx, query) <= HOST_FILTER_VERTICES else backend
    filter_idx = host_idx if filter_on is host else idx
    if share is not None and restrict:
        if share.anchor not in restrict:
            raise ValueError(f"a slice of a shared count restricts its anchor, query vertex {share.anchor}")
        unrestricted = share.get("filter", lambda: filter_on.candidates(filter_idx, query,
                                                                         homomorphism=options.homomorphism))
        cands = [c if u not in restrict else restricted(filter_on.xp, c, restrict[u])
                 for u, c in enumerate(unrestricted)]
    else:
        share = None
        cands = filter_on.candidates(filter_idx, query, homomorphism=options.homomorphism, restrict=restrict)
    sizes = [int(c.shape[0]) for c in cands]
    clock.lap("filter")
    if explain is not None:
        explain.candidates = sizes
    if min(sizes) == 0:
        return _explained(explain, 0, "a query vertex has no candidate", "filter")
    reason = "forced" if path == "general" else _general_reason(query, options, less_than, automorphisms)
    if reason:
        return _general(backend, idx, query, options, _on(backend, filter_on, cands), budget, less_than, control,
                        clock, explain, reason)
    # Light queries finish their trial before its allowance needs the scan measure, so it is taken when asked.
    scan_entries = _Lazy(lambda: candidate_edges.scan_entries(filter_on, filter_idx, cands, query))
    if path == "auto" and trial:
        for attempt in _trials(backend, host, scan_entries, query.n, backend.adjacency_over_bus(idx)):
            runner = attempt.runner
            total = _join(runner, host_idx if runner is host else idx, query, options, _on(runner, filter_on, cands),
                          budget, less_than, control, clock, explain, attempt)
            if total is not None:
                if explain is None:
                    return total
                return _explained(explain, total, f"the general join finished within its trial allowance of "
                                                  f"{attempt.allowance()} entries on {runner.name} (refinement "
                                                  f"would scan {scan_entries()})")
    sides = _Sides(backend, idx, host, host_idx, filter_on)
    core: _Core | None = None
    if share is not None:
        def shared_core() -> _Core | None:
            scan = candidate_edges.scan_entries(filter_on, filter_idx, unrestricted, query)
            if not _buildable(sides, scan, budget):
                return None
            return _refine_and_plan(sides, query, options, unrestricted, scan, budget, trailing,
                                    start=share.anchor)

        core = share.get("core", shared_core)
        # A heavy anchor image is split by the images of a second vertex, which the core must then hold.
        if core is not None and (not core.refined or set(restrict or {}) <= set(core.plan.core)):
            clock.lap("plan")
        else:
            core = None
    if core is None:
        scan = scan_entries()
        if path == "auto" and not _buildable(sides, scan, budget):
            if split_work is not None:
                raise HeavyQuery(f"its candidate-edge index would need about {scan * candidate_edges.SCAN_ENTRY_BYTES}"
                                 f" bytes to build, over half the budget ({budget})")
            return _general(backend, idx, query, options, _on(backend, filter_on, cands), budget, less_than,
                            control, clock, explain, f"the candidate-edge index would need about "
                            f"{scan * candidate_edges.SCAN_ENTRY_BYTES} bytes to build, over half the budget "
                            f"({budget})")
        core = _refine_and_plan(sides, query, options, cands, scan, budget, trailing, clock=clock)
        restrict = None  # the refined candidates are the slice's own
        if split_work is not None and core.refined and core.plan.cost >= split_work:
            raise HeavyQuery(f"its counting plan's estimated work {core.plan.cost:.3g} is at least "
                             f"distsm.cluster.split-work ({split_work:.3g})")
    if not core.refined:
        return _explained(explain, 0, "refinement left a query vertex without candidates", "filter")
    plan, runner, ce, left = core.plan, core.runner, core.ce, core.left
    counter = TrailingCounter(runner, plan, ce, homomorphism=options.homomorphism, budget=left // 2)
    level_rows = [0] * len(plan.core)
    total = 0
    for table in walk_core(runner, ce, plan.core[0], list(plan.steps), left // 2,
                           not options.homomorphism, control, level_rows, allowed=restrict):
        clock.lap("core join")
        total += counter.count(table, control)
        clock.lap("trailing count")
    if less_than:
        assert automorphisms is not None  # _general_reason sends symmetry breaking without |Aut(Q)| to the join
        total //= automorphisms
    if explain is not None:
        explain.path, explain.order = "trailing", plan.order
        explain.trailing = tuple(t.vertex for t in plan.trailing)
        explain.estimated = list(plan.level_estimates)
        explain.actual = list(level_rows)
        explain.refined_candidates = core.refined
        explain.candidate_edges = sum(a.edges for a in ce.arcs.values())
        explain.refine_passes = ce.passes
        explain.trailing_entries = counter.entries
        explain.plans_tried = plan.plans_tried
    why = f"core of {len(plan.core)} joined over candidate edges, {len(plan.trailing)} trailing vertices " \
          f"counted from set sizes, on {runner.name} (estimated work {plan.cost:.3g}; refined on {core.refiner})"
    if less_than:
        why += f"; unique = embeddings / |Aut| ({automorphisms})"
    return _explained(explain, total, why)


@dataclass(frozen=True)
class _Sides:
    """Where a count's work may run: ``backend`` on ``idx``, its host twin ``host`` on ``host_idx`` (the same
    objects when there is no twin), and the side that filtered."""

    backend: Backend
    idx: DataIndex
    host: Backend
    host_idx: DataIndex
    filter_on: Backend


@dataclass(frozen=True)
class _Core:
    """A count's refined candidate edges and its core-and-trailing plan, ready to join on ``runner``;
    ``refined`` is empty when refinement left a query vertex without candidates (no match)."""

    plan: Any
    runner: Backend
    ce: Any
    left: int          # bytes the core join and the trailing count share
    refined: list[int]
    refiner: str


def _fits(scan: int, budget: int) -> bool:
    """Whether building a candidate-edge index that scans ``scan`` entries fits in half of ``budget``."""
    return scan * candidate_edges.SCAN_ENTRY_BYTES <= budget // 2


def _buildable(sides: _Sides, scan: int, budget: int) -> bool:
    """Whether the candidate-edge index fits the budget, or a host twin's budget (where it is then counted)."""
    return _fits(scan, budget) or (sides.host is not sides.backend and _fits(scan, sides.host.default_budget()))


def _refine_and_plan(sides: _Sides, query: Graph, options: MatchOptions, cands: list[Any], scan: int, budget: int,
                     trailing: frozenset[int] | None, *, start: int | None = None,
                     clock: _Clock | None = None) -> _Core:
    """Refine ``cands`` (held by ``sides.filter_on``; refinement would scan ``scan`` entries) into candidate
    edges, and plan the count over them (``start``: the core's first vertex).  An index that does not fit the
    device's ``budget`` but fits the host's is built, joined and counted on the host (out of core, where a device
    holds little, this beats the general join reading the adjacency over the bus)."""
    backend, host = sides.backend, sides.host
    on_host_only = host is not backend and not _fits(scan, budget)
    if on_host_only:
        budget = host.default_budget()
    # Refinement reads every candidate's adjacency: past distsm.engine.device-refine entries a device does it
    # faster than the host, which then plans over a copy of the result.
    refiner = backend if host is not backend and scan > engine_options().device_refine and not on_host_only \
        else host
    built = candidate_edges.build(refiner, sides.idx if refiner is backend else sides.host_idx, query,
                                  _on(refiner, sides.filter_on, cands), lookup_bytes=budget // 4)
    on_host = built if refiner is host else built.to(refiner.to_host)
    if clock is not None:
        clock.lap("refine")
    refined = [int(c.shape[0]) for c in on_host.candidates]
    if min(refined) == 0:
        return _Core(None, host, None, 0, [], refiner.name)
    # The index and the candidates stay resident: the join and the count share what is left of the budget.
    left = max(budget - on_host.nbytes, budget // 8)
    sampler = Sampler(host, query, on_host, homomorphism=options.homomorphism, walks=walks_for(left))
    plan = plan_count(query, sampler, refined, options.homomorphism, trailing, start)
    # Plans estimated below distsm.engine.host-work (entries read and written; about a second of NumPy) run on the
    # host even for a device backend: below it a device spends more on launches than on the work.
    runner = host if plan.cost < engine_options().host_work or on_host_only else backend
    ce = on_host if runner is host else built if refiner is runner else on_host.to(runner.xp.asarray)
    if clock is not None:
        clock.lap("plan")
    return _Core(plan, runner, ce, left, refined, refiner.name)


def _pool_vertices(idx: DataIndex, query: Graph) -> int:
    """Data vertices the filter tests for ``query``: the sizes of its vertices' label pools."""
    by_label = idx.vertices_by_label
    return sum(int(by_label[lab].shape[0]) for lab in query.vertex_labels.tolist() if lab in by_label)


def _on(runner: Backend, holder: Backend, arrays: list[Any]) -> list[Any]:
    """``arrays`` (vertex ids held by ``holder``'s memory) where ``runner`` reads them, in ``runner``'s vertex
    dtype (the host's candidates are int64, a device's int32: its kernels take them as they are)."""
    if runner is holder:
        return arrays
    if runner.on_device:
        return [runner.xp.asarray(a, dtype=runner.vertex_dtype) for a in arrays]
    return [holder.to_host(a) for a in arrays]


class _Lazy:
    """An int computed on the first call."""

    def __init__(self, compute: Callable[[], int]):
        self._compute = compute
        self._value: int | None = None

    @property
    def known(self) -> bool:
        return self._value is not None

    def __call__(self) -> int:
        value = self._value
        if value is None:
            value = self._value = self._compute()
        return value


@dataclass(frozen=True)
class _Trial:
    """One trial general join: its runner and its allowance of adjacency entries, ``least`` or ``ratio`` times the
    entries refinement would scan (``scan``, a cached measure) when that is more."""

    runner: Backend
    least: int
    ratio: float
    scan: _Lazy

    def allowance(self) -> int:
        return max(self.least, int(self.ratio * self.scan()))

    def passed(self, gathered: int) -> bool:
        """Whether ``gathered`` entries pass the allowance (the scan is measured only once past ``least``)."""
        return gathered > self.least and gathered > self.allowance()

    def chunk_entries(self) -> int:
        """Entries per chunk and level: half the allowance, or of ``least`` while the scan is not measured (fine
        enough to stop near it, coarse enough that a device runs few, large launches)."""
        return max((self.allowance() if self.scan.known else self.least) // 2, MIN_CHUNK_ENTRIES)


def _trials(backend: Backend, host: Backend, scan: _Lazy, nq: int, over_bus: bool) -> list[_Trial]:
    """The trial general joins, in order.

    The planner's own cost grows with the query, so the least allowance is ``trial-entries`` per query vertex.
    A device backend tries its host first only when refinement would scan no more than that (a small query on a
    small neighbourhood: the device would spend more on launches than on the join).  A device that reads the
    adjacency over the bus (``over_bus``) leaves the trial to its host, which reads the same memory directly."""
    opts = engine_options()
    least = opts.trial_entries * nq
    if not backend.on_device or (over_bus and host is not backend):
        trials = [_Trial(host, least, opts.trial_ratio_host, scan)]
    else:
        trials = [_Trial(backend, least, opts.trial_ratio_device, scan)]
        if host is not backend and scan() <= least:
            trials.insert(0, _Trial(host, least, 0.0, scan))
    return [t for t in trials if t.least > 0 or t.ratio > 0]


class _TrialStopped(Exception):
    """A trial general join passed its allowance."""


def _join(runner: Backend, idx: DataIndex, query: Graph, options: MatchOptions, cands: list[Any], budget: int,
          less_than: tuple[tuple[int, int], ...], control: Control | None, clock: _Clock,
          explain: Explanation | None, trial: _Trial | None = None) -> int | None:
    """The general join's count.  As a ``trial`` it returns None once it has read more than about its allowance of
    adjacency entries.  Its chunks and fused descents are then cut to the allowance (the walk checks between
    chunks), so a stopped trial has read at most a few allowances."""
    prepared = prepare(runner, idx, query, options, less_than=less_than, candidates=cands)
    assert prepared is not None  # every query vertex has candidates
    stats: dict[str, int] = {}
    nq = query.n
    watched = control
    if trial is not None:
        def stop() -> bool:
            if trial.passed(stats.get("gathered", 0)):
                raise _TrialStopped
            return control is not None and control.cancelled is not None and control.cancelled()

        budget = min(budget, trial.chunk_entries() * entry_bytes(nq) * nq)
        watched = Control(cancelled=stop, progress=None if control is None else control.progress)
    counted = explain is not None or trial is not None
    try:
        total = sum(int(c) for c in walk(runner, prepared, budget, True, stats=stats if counted else None,
                                         control=watched))
    except _TrialStopped:
        clock.lap("trial join")
        if explain is not None:
            explain.trials.append((runner.name, trial.allowance() if trial else 0, stats.get("gathered", 0)))
        return None
    clock.lap("join")
    if explain is not None:
        explain.path, explain.order = "general", prepared.plan.order
        explain.actual = [stats.get(f"level{i}") for i in range(nq)]
    return total


def _general(backend: Backend, idx: DataIndex, query: Graph, options: MatchOptions, cands: list[Any], budget: int,
             less_than: tuple[tuple[int, int], ...], control: Control | None, clock: _Clock,
             explain: Explanation | None, reason: str) -> int:
    """The general join's count without allowance, explained by ``reason``."""
    total = _join(backend, idx, query, options, cands, budget, less_than, control, clock, explain)
    assert total is not None  # only an allowance stops a join
    return _explained(explain, total, reason)


def _general_reason(query: Graph, options: MatchOptions, less_than: tuple[tuple[int, int], ...],
                    automorphisms: int | None) -> str:
    """Why the semantics send a count to the general join ("" when the trailing-count path applies)."""
    if query.n < 2:
        return "a single query vertex: its candidates are the matches"
    if options.induced:
        return "induced: trailing vertices would need non-edge checks among themselves"
    if less_than and not automorphisms:
        return "symmetry breaking without the automorphism count"
    return ""


def _explained(explain: Explanation | None, total: int, reason: str, path: str | None = None) -> int:
    if explain is not None:
        explain.count, explain.reason = total, reason
        explain.path = path or explain.path
    return total


class _Clock:
    """Stage timings for an :class:`Explanation` (the backend synchronises so device work is counted)."""

    def __init__(self, backend: Backend, explain: Explanation | None):
        self.backend, self.explain = backend, explain
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        if self.explain is None:
            return
        self.backend.synchronize()
        now = time.perf_counter()
        self.explain.seconds[stage] = self.explain.seconds.get(stage, 0.0) + now - self.t
        self.t = now


def iter_matches(backend: Backend, data: Graph, query: Graph, options: MatchOptions, *, budget: int,
                 limit: int | None = None, less_than: tuple[tuple[int, int], ...] = (),
                 restrict: Mapping[int, Allowed] | None = None, control: Control | None = None) -> Iterator[np.ndarray]:
    """Yield host ``int64[rows, query.n]`` arrays of matches (column ``i`` = image of query vertex ``i``)."""
    if limit is not None and limit <= 0:
        return
    prepared = prepare(backend, data, query, options, less_than=less_than, restrict=restrict)
    if prepared is None:
        return
    inv = prepared.plan.inverse_order
    tables = walk(backend, prepared, budget, count_only=False, control=control)
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
