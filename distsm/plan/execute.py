"""Executing a partitioned plan: which jobs a query runs, running one job, merging the jobs' results.

Both executors go through this module.  :class:`~distsm.partitioned.PartitionedMatcher` runs the jobs one after
another in this process; :class:`~distsm.Matcher` ships each job to a Dask worker
(:func:`distsm.cluster.tasks.run_job`) and the merge to one more task.  A job runs on a :class:`Site`, which says
where parts, the whole graph's adjacency and the candidate filter come from (this process, or one worker's
cache), so the answer, its breakdown and its result type are the same on both.

What a plan runs (:func:`jobs`) is decided here and only here:

* :attr:`Strategy.PBE <distsm.plan.inter.Strategy>`: every part's intra-partition join, plus the spanning searches
  of every edge group (one job, or one per slice of start vertices on a cluster).  ``intra + inter == count``.
* :attr:`Strategy.GLOBAL <distsm.plan.inter.Strategy>`: one join over the whole graph that counts every match
  once; the intra-partition joins would only repeat part of its work, so they do not run and the result carries
  no intra/inter split (``intra is None``).  With one part or no cross edges there is nothing to span, and the
  intra-partition joins are the whole answer under either strategy.
"""

from __future__ import annotations

import threading
import time
import traceback as tb
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from distsm.graph import Graph, graph_fingerprint
from distsm.kernels import batch, engine
from distsm.kernels.array_backend import restricted
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.counting import Count, PlannedCount, Target
from distsm.kernels.dfs import SearchShare
from distsm.kernels.index import DataIndex
from distsm.kernels.placement import Placement
from distsm.plan.inter import EdgeGroup, InterPartitionPlan, Strategy
from distsm.plan.search import (Search, Span, WholeGraph, inter_count, inter_rows, intra_task, prepare_search,
                                symmetry)
from distsm.plan.slices import Slice
from distsm.plan.split import SharedPlan, count_slice
from distsm.semantics import Semantics

#: The statuses a :class:`QueryResult` may have.
STATUSES = ("ok", "timeout", "cancelled", "error")
#: Task ranges a heavy depth-first search is cut into on a cluster, at most, and kept (``dfs.cuts``): the worker
#: that cuts it joins them into the matcher's ``inter_slices`` (``SearchShare.coarsened``).
SEARCH_PIECES = 32


@dataclass(frozen=True)
class Job:
    """One job of a query's search.

    ``stage == "intra"``: the intra-partition join of ``part``.  ``stage == "inter"``: the spanning searches of
    ``groups`` (their representatives), or with ``groups=None`` one join over the whole graph counting every match;
    ``start`` limits the ids of the vertices the searches start from (None: all), which is how one query's
    spanning work is sliced over workers; ``second`` further limits the ids of the vertices they visit second,
    which splits one heavy start vertex's work.  ``whole`` marks the one job of a query sent whole to a worker
    (see :func:`whole_query_jobs`); ``heavy`` marks a job whose query is known to pass its trial join's allowance
    (a slice of a query its worker found heavy and split, or a query a batch's light stage left), which skips its
    own trial.
    """

    stage: str
    part: int | None = None
    groups: tuple[EdgeGroup, ...] | None = None
    start: range | None = None
    second: range | None = None
    whole: bool = False
    heavy: bool = False


@dataclass
class JobResult:
    """What one :class:`Job` found: a count (or the rows it listed) and its cost."""

    stage: str
    part: int | None
    count: int
    rows: np.ndarray | None
    seconds: float
    worker: str
    partial_matches: int = 0     # partial matches produced (the work measure PBE reports); spanning searches
    gathered_bytes: int = 0      # adjacency read by spanning searches (4 bytes per entry scanned)
    bytes_h2d: int = 0           # out of core: part indexes and gathered adjacency copied to the device
    device_bytes: int = 0        # the site's peak device bytes after the job (as far as its backend knows them)
    heavy: Heavy | None = None   # a whole query found too heavy to count alone (then count is 0), and why
    #: a slice of a unique count: ``count`` is embeddings, and the query's matches are the sum over its slices
    #: divided by this (``|Aut(Q)|``; see :mod:`distsm.plan.split`)
    automorphisms: int | None = None
    #: of ``seconds``, what a slice spent before counting: its shared plan's index built where it runs (see
    #: :meth:`PlanCache.shared_index`), or the slices cut by the worker that found the query heavy
    setup_seconds: float = 0.0


@dataclass
class QueryResult:
    """The outcome of one query, in process or on a cluster.

    ``count`` is the number of matches (or of listed rows, with ``rows``).  A PBE plan's count is
    ``sum(intra) + inter`` (``intra`` per part); a global plan counted every match in one join over the whole
    graph, and then ``intra`` and ``inter`` are None (:attr:`runs` says which).  ``semantics`` and ``plan`` name
    what was computed.  ``distribution`` says how a cluster spread the query: ``"whole"`` (one job on one worker)
    or ``"sliced"`` (its jobs and slices over the workers), and ``distribution_reason`` why; ``peak_device_bytes``
    is each worker's peak device bytes as of its last job for the query, and ``bytes_h2d`` the bytes the query
    moved host to device (out of core).  ``seconds`` holds ``plan``, ``intra`` and ``inter`` (each summed over the
    query's jobs), ``inter_slice_max`` (its longest spanning job or slice), ``inter_setup`` (of ``inter``, what
    slicing cost before its slices counted) and ``merge``.  A query that did not finish has ``status``
    ``"timeout"``, ``"cancelled"`` or ``"error"`` and no count; an error keeps its ``exception`` and formatted
    ``traceback``.
    """

    query: str
    status: str = "ok"
    count: int | None = None
    rows: np.ndarray | None = None
    semantics: Semantics | None = None
    plan: InterPartitionPlan | None = None
    partitions: int | None = None
    intra: list[int] | None = None
    inter: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    partial_matches: int = 0
    gathered_bytes: int = 0
    bytes_h2d: int = 0
    workers: list[str] = field(default_factory=list)
    peak_device_bytes: dict[str, int] = field(default_factory=dict)
    distribution: str | None = None
    distribution_reason: str = ""
    error: str | None = None
    exception: BaseException | None = None
    traceback: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def strategy(self) -> Strategy | None:
        return None if self.plan is None else self.plan.strategy

    @property
    def runs(self) -> str | None:
        """What ran, in words (None for a query that did not finish)."""
        if not self.ok:
            return None
        if self.intra is None:
            return "one join over the whole graph counting every match"
        return f"intra-partition joins of {len(self.intra)} parts plus spanning searches"

    def summary(self) -> dict[str, Any]:
        """JSON-ready: the query, status, count, semantics, plan, split and timings (no rows)."""
        out: dict[str, Any] = {"query": self.query, "status": self.status, "count": self.count,
                               "seconds": {k: round(v, 6) for k, v in self.seconds.items()}}
        if self.semantics is not None:
            out["semantics"] = self.semantics.as_dict()
        if self.ok:
            out.update(strategy=None if self.strategy is None else self.strategy.value, runs=self.runs,
                       intra=None if self.intra is None else sum(self.intra), inter=self.inter,
                       partitions=self.partitions, distribution=self.distribution, bytes_h2d=self.bytes_h2d,
                       peak_device_bytes=max(self.peak_device_bytes.values(), default=0))
        else:
            out["error"] = self.error
        return out

    @classmethod
    def failed(cls, query: str, status: str, error: str, exception: BaseException | None = None) -> QueryResult:
        """The result of a query that did not finish (``status`` ``"timeout"``, ``"cancelled"``, ``"error"``)."""
        if status not in STATUSES[1:]:
            raise ValueError(f"not a failure status: {status!r}")
        trace = None
        if exception is not None and exception.__traceback__ is not None:
            trace = "".join(tb.format_exception(type(exception), exception, exception.__traceback__))
        return cls(query, status, error=error, exception=exception, traceback=trace)


#: Asked by :func:`run_whole_jobs` with the indices of the queries still to be counted alone after the next one:
#: True where it took them (a cluster hands them to idle workers).
HandOff = Callable[[list[int]], bool]


class Site(Protocol):
    """Where jobs run: this process (:class:`~distsm.partitioned.PartitionedMatcher`) or one Dask worker
    (:class:`~distsm.cluster.tasks.WorkerSite`)."""

    backend: Backend
    worker: str

    def part(self, i: int) -> AbstractContextManager[Any]:
        """Part ``i`` (a local part with its index usable by ``backend``) for the duration of the context."""

    def whole_graph(self) -> tuple[DataIndex, Any, Any]:
        """``(index, part of every vertex, host adjacency or None)`` of the whole graph."""

    def host_index(self) -> DataIndex | None:
        """The whole graph's index in host memory (NumPy arrays), where light work and planning of whole queries
        run on a device backend; None where ``backend`` works in host memory anyway."""

    def cross_vertices(self) -> np.ndarray:
        """Sorted ids of the vertices with a cross edge."""

    plans: PlanCache

    def moved_bytes(self) -> int:
        """Bytes copied host to device so far (out of core; 0 where everything is resident)."""

    def device_bytes(self) -> int:
        """Peak device bytes this site has held so far (as far as its backend knows them)."""


#: Queries whose filters and planned searches a :class:`PlanCache` keeps, and counts whose slices' shares (and split
#: plans' indexes) it keeps.
RECENT_QUERIES = 8
SHARED_COUNTS = 2
#: Filters of a batch's queries left to their own jobs that a :class:`PlanCache` keeps for those jobs (a batch
#: is counted by one task: its leftovers run right after its light stage).
KEPT_FILTERS = 256


class PlanCache:
    """The candidate filters and planned spanning searches of the last :data:`RECENT_QUERIES` queries on one site.

    Every slice of a query's spanning search that lands on a site reuses the search filtered and planned there
    once (keyed by the query's fingerprint, the semantics and the search), so a query is planned once per site,
    not once per slice; ``planned`` counts the searches planned.  Thread-safe (a worker may run several tasks at
once); filtering and planning are serialized, which costs little beside the joins.
    """

    def __init__(self, size: int = RECENT_QUERIES):
        self.size = size
        self.planned = 0
        self._lock = threading.RLock()  # a search's build looks its candidates up
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        self._shares: OrderedDict[tuple, SharedCount] = OrderedDict()
        self._indexes: OrderedDict[str, Any] = OrderedDict()
        self._kept: OrderedDict[tuple, list[Any]] = OrderedDict()

    def _get(self, key: tuple, build: Callable[[], Any]) -> Any:
        # Builds run under the lock: slices of one query arriving together on a worker's threads plan it once.
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            value = self._entries[key] = build()
            while len(self._entries) > self.size * 4:  # a query has a filter and a few searches
                self._entries.popitem(last=False)
            return value

    def candidates(self, backend: Backend, index: DataIndex, query: Graph, homomorphism: bool) -> list[Any]:
        """The candidate filter of ``query`` on ``index``."""
        key = ("candidates", graph_fingerprint(query), homomorphism)
        return self._get(key, lambda: backend.candidates(index, query, homomorphism=homomorphism))

    def shared_count(self, query: Graph, sem: Semantics, anchor: int, stages: Callable[[], Count]) -> SharedCount:
        """What the global join's slices of ``query`` restricting ``anchor`` share on this site (see
        :class:`SharedCount`; ``stages`` makes the unrestricted count on first use).  Those may hold a heavy
        query's candidate edges on the device, so only the last :data:`SHARED_COUNTS` are kept (a batch runs one
        query's slices together: they share its priority)."""
        key = (graph_fingerprint(query), sem, anchor)
        with self._lock:
            if key not in self._shares:
                self._shares[key] = SharedCount(stages(), anchor)
                while len(self._shares) > SHARED_COUNTS:
                    self._shares.popitem(last=False)
            self._shares.move_to_end(key)
            return self._shares[key]

    def keep_candidates(self, backend: Backend, query: Graph, homomorphism: bool, candidates: list[Any]) -> None:
        """Keep ``query``'s filter on ``backend`` (a batch's, for the query's own job: :meth:`kept_candidates`)."""
        with self._lock:
            self._kept[(graph_fingerprint(query), homomorphism, backend.name)] = candidates
            while len(self._kept) > KEPT_FILTERS:
                self._kept.popitem(last=False)

    def kept_candidates(self, backend: Backend, query: Graph, homomorphism: bool) -> list[Any] | None:
        """``query``'s filter on ``backend`` as :meth:`keep_candidates` kept it, once (None: not kept)."""
        with self._lock:
            return self._kept.pop((graph_fingerprint(query), homomorphism, backend.name), None)

    def shared_index(self, shared: SharedPlan, backend: Backend) -> Any:
        """``shared``'s candidate-edge index where ``backend`` reads it (one copy per plan on this site, however
        many of its slices run here; the last :data:`SHARED_COUNTS` plans are kept)."""
        with self._lock:
            if shared.token not in self._indexes:
                self._keep_index(shared.token, shared.index(backend))
            self._indexes.move_to_end(shared.token)
            return self._indexes[shared.token]

    def adopt_index(self, shared: SharedPlan, ce: Any) -> None:
        """Keep ``ce``, the index the count that made ``shared`` planned over (where its slices read it, lookups
        included), as ``shared``'s: the slices that run on the planning site do not build it again."""
        with self._lock:
            self._keep_index(shared.token, ce)

    def _keep_index(self, token: str, ce: Any) -> None:
        self._indexes[token] = ce
        while len(self._indexes) > SHARED_COUNTS:
            self._indexes.popitem(last=False)

    def search(self, backend: Backend, index: DataIndex, query: Graph, sem: Semantics, group: EdgeGroup | None,
               spanning_only: bool) -> Search:
        """The spanning search of ``group`` (None: the global join) filtered and planned on ``index``."""

        def build() -> Search:
            cands = self.candidates(backend, index, query, sem.homomorphism)
            self.planned += 1
            return prepare_search(backend, index, query, sem, group=group, spanning_only=spanning_only,
                                  candidates=cands)

        key = ("search", graph_fingerprint(query), sem, None if group is None else group.representative,
               spanning_only)
        return self._get(key, build)


class SharedCount:
    """What the slices of one count share on one site (thread-safe): the unrestricted count's filter, and once a
    slice needs it, its counting plan with the core join starting at ``anchor``.

    Slices of a count restrict the images of one query vertex, ``anchor``, to disjoint id ranges (a heavy image
    may be split further by the ids of a second vertex).  Each slice then joins only its range of the anchor's
    refined candidates under the one plan (:meth:`~distsm.kernels.counting.Count.run` with ``allowed``), instead of
    filtering, refining and planning its restricted query from scratch.
    """

    def __init__(self, whole: Count, anchor: int):
        self.anchor = anchor
        self._whole = whole
        self._lock = threading.Lock()
        self._plan: PlannedCount | None = None

    def candidates(self) -> list[Any]:
        with self._lock:  # slices arriving together on a worker's threads filter once
            return self._whole.unrestricted()

    def plan(self) -> PlannedCount:
        with self._lock:
            if self._plan is None:
                self._plan = self._whole.plan(start=self.anchor)
            return self._plan


@dataclass(frozen=True)
class Heavy:
    """A whole query whose counting plan is estimated too heavy to count alone: its worker splits it instead, by
    ``shared`` (its plan and candidate-edge index) where it has one, else (a count that takes the general join)
    by slices of the global join that plan themselves."""

    reason: str
    shared: SharedPlan | None = None
    #: a count that takes the depth-first search: the ranges of its tasks the cluster counts apart
    search: SearchShare | None = None


def whole_graph_join(plan: InterPartitionPlan, k: int, cross_edges: int) -> bool:
    """Whether ``plan`` runs one join over the whole graph in place of the intra-partition joins."""
    return plan.strategy is Strategy.GLOBAL and k > 1 and cross_edges > 0


def jobs(plan: InterPartitionPlan, k: int, cross_edges: int, slices: Sequence[Slice] | None = None) -> list[Job]:
    """The jobs of ``plan`` on ``k`` parts with ``cross_edges`` cross edges (see the module docstring).

    ``slices`` (:data:`~distsm.plan.slices.Slice` s: start ranges covering every vertex id once; a start range may
    repeat with second ranges that cover every id once) splits the spanning work into one job per slice; None runs
    it as one job.
    """
    whole = whole_graph_join(plan, k, cross_edges)
    intra = [] if whole else [Job("intra", part=p) for p in range(k)]
    if k == 1 or cross_edges == 0:
        return intra
    groups = None if whole else tuple(plan.groups)
    spans: Sequence[tuple[range | None, range | None]] = slices or [(None, None)]
    return intra + [Job("inter", groups=groups, start=start, second=second) for start, second in spans]


def whole_query_jobs() -> list[Job]:
    """One job counting every match of a query over the whole graph: the query sent whole to one worker."""
    return [Job("inter", whole=True)]


def _spans(site: Site, job: Job) -> tuple[WholeGraph, list[Span]]:
    """What an inter job reads, and its spanning searches: the global join (over every start vertex, counting
    every match) or each edge group's representative (over the cross vertices)."""
    graph = WholeGraph(*site.whole_graph())
    if job.groups is None:
        return graph, [Span(None, job.start, job.second, spanning_only=False)]
    cross = site.cross_vertices()
    start = cross if job.start is None else restricted(np, cross, job.start)
    return graph, [Span(group, start, job.second) for group in job.groups]


def _search(site: Site, graph: WholeGraph, query: Graph, sem: Semantics, span: Span) -> Search:
    return site.plans.search(site.backend, graph.index, query, sem, span.group, span.spanning_only)


def job_count(site: Site, job: Job, query: Graph, sem: Semantics, budget: int | BudgetPlan, *,
              stats: dict[str, int] | None = None, control: engine.Control | None = None,
              split_work: float | None = None) -> int | Heavy:
    """The number of matches ``job`` finds; ``stats`` accumulates the spanning searches' work.  Given
    ``split_work``, a whole query whose counting plan is estimated at that much work or more (or whose candidate-
    edge index fits no budget) is not counted: :class:`Heavy` says why."""
    if job.stage == "intra":
        assert job.part is not None  # an intra job names its part
        with site.part(job.part) as local:
            return intra_task(site.backend, local, query, sem, budget, count_only=True, control=control)
    graph, spans = _spans(site, job)
    if job.groups is None and graph.adjacency is None:
        # The resident (or zero-copy) index serves the engine's counting paths, which beat the plain join on heavy
        # queries (the trailing count); a slice of the global join is that count restricted to the slice's ids.
        restrict = _slice_restriction(site, graph, query, sem, spans[0])
        return whole_count(site, Placement.of(site.backend, graph.index, site.host_index()), job, query, sem,
                           budget, restrict, control, split_work if job.whole else None)
    return sum(inter_count(site.backend, graph, query, sem, budget, span, stats=stats, control=control,
                           search=_search(site, graph, query, sem, span))
               for span in spans)


def whole_count(site: Site, placement: Placement, job: Job, query: Graph, sem: Semantics,
                 budget: int | BudgetPlan, restrict: dict[int, Any], control: engine.Control | None,
                 split_work: float | None) -> int | Heavy:
    """A count over the whole graph by the engine's stages: a whole query (``light() or run(plan())``, or
    :class:`Heavy` past ``split_work``), or a slice restricted by ``restrict``, which runs the plan its site
    shares among the query's slices (:class:`SharedCount`) where that plan's core holds the restricted vertices."""
    stages = Count(placement, Target(query, sem.match_options, symmetry(query, sem, divide=not restrict),
                                     restrict or None), budget, control=control,
                   candidates=site.plans.kept_candidates(placement.filter_side(query).backend, query,
                                                         sem.homomorphism) if not restrict else
                   site.plans.shared_count(
                       query, sem, next(iter(restrict)),
                       lambda: Count(placement, Target(query, sem.match_options, symmetry(query, sem, False)),
                                     budget)).candidates())
    if split_work is not None and not restrict:
        share = stages.search_share(split_work, SEARCH_PIECES)
        if share is not None:
            return Heavy(share.reason, search=share)
    total = stages.light(trials=not job.heavy)
    if total is not None:
        return total
    if restrict:
        shared = site.plans.shared_count(query, sem, next(iter(restrict)), lambda: stages).plan()
        if shared.empty or shared.covers(restrict):
            return stages.run(shared, allowed=restrict)
        return stages.run(stages.plan())
    planned = stages.plan()
    if split_work is not None and planned.general:
        return Heavy(planned.reason)
    # A plan bound for a device is judged by its NumPy-equivalent work: on 2 x H200 the 50M-edge R-MAT batches
    # split counts of 0.03-0.12 s at split-work itself, and their slices added up to 2-4 times their whole count.
    if split_work is not None and planned.plan is not None and planned.host_cost >= split_work:
        on = "" if planned.host_cost == planned.cost else f" ({planned.host_cost:.3g} on NumPy's scale)"
        sharing = SharedPlan.of(planned, placement, symmetry(query, sem).automorphisms)
        site.plans.adopt_index(sharing, planned.ce)
        return Heavy(f"its counting plan's estimated work {planned.cost:.3g}{on} is at least {split_work:.3g}, "
                     "past which a cluster splits a query (distsm.cluster.split-threshold and split-work)", sharing)
    return stages.run(planned)


def _slice_restriction(site: Site, graph: WholeGraph, query: Graph, sem: Semantics, span: Span) -> dict[int, Any]:
    """The images a global-join slice allows: its start ids for the vertex the global join starts from (the one
    the client balanced the slices over) and its second ids for the vertex it visits second; empty for a whole
    query.  Any fixed query vertex would partition the matches; these keep the slices' work apart."""
    if span.start is None and span.second is None:
        return {}
    search = _search(site, graph, query, sem, span)
    restrict: dict[int, Any] = {}
    if span.start is not None:
        restrict[search.anchor] = span.start
    if span.second is not None and search.prepared is not None:
        restrict[search.prepared.plan.order[1]] = span.second
    return restrict


def job_rows(site: Site, job: Job, query: Graph, sem: Semantics, budget: int | BudgetPlan, *,
             limit: int | None = None,
             control: engine.Control | None = None) -> Iterator[np.ndarray]:
    """Stream the global-id rows ``job`` finds (at most ``limit``)."""

    def chunks() -> Iterator[np.ndarray]:
        if job.stage == "intra":
            assert job.part is not None  # an intra job names its part
            with site.part(job.part) as local:
                yield from intra_task(site.backend, local, query, sem, budget, count_only=False, limit=limit,
                                      control=control)
            return
        graph, spans = _spans(site, job)
        for span in spans:
            yield from inter_rows(site.backend, graph, query, sem, budget, span, limit=limit, control=control,
                                  search=_search(site, graph, query, sem, span))

    return engine.take(chunks(), limit)


def run_job(site: Site, job: Job, query: Graph, sem: Semantics, budget: int | BudgetPlan, *,
            listing: bool = False,
            limit: int | None = None, control: engine.Control | None = None,
            split_work: float | None = None) -> JobResult:
    """Run ``job`` on ``site``: its count, or with ``listing`` its rows (at most ``limit``), and its cost
    (``split_work``: see :func:`job_count`)."""
    t = time.perf_counter()
    moved = site.moved_bytes()
    stats: dict[str, int] = {}
    rows, heavy = None, None
    if listing:
        rows = concat_rows(job_rows(site, job, query, sem, budget, limit=limit, control=control), query.n)
        count = int(rows.shape[0])
    else:
        found = job_count(site, job, query, sem, budget, stats=stats, control=control, split_work=split_work)
        count, heavy = (0, found) if isinstance(found, Heavy) else (found, None)
    return JobResult(job.stage, job.part, count, rows, time.perf_counter() - t, site.worker, stats.get("partial", 0),
                 4 * stats.get("gathered", 0), site.moved_bytes() - moved, site.device_bytes(), heavy)


def run_slice(site: Site, shared: SharedPlan, restrict: dict[int, range], query: Graph, sem: Semantics,
              budget: int | BudgetPlan, *, control: engine.Control | None = None) -> JobResult:
    """One slice of a heavy count split by ``shared`` (see :mod:`distsm.plan.split`) on ``site``: the matches
    whose images lie in ``restrict`` (embeddings for a unique count, which the merge divides)."""
    t = time.perf_counter()
    index, _, _ = site.whole_graph()
    placement = Placement.of(site.backend, index, site.host_index())
    ce = site.plans.shared_index(shared, shared.runner(placement).backend)
    setup = time.perf_counter() - t
    count = count_slice(placement, shared, ce, query, sem, restrict, budget, control)
    return JobResult("inter", None, count, None, time.perf_counter() - t, site.worker,
                     device_bytes=site.device_bytes(), automorphisms=shared.automorphisms, setup_seconds=setup)


def run_search_slice(site: Site, tasks: tuple[int, int], query: Graph, sem: Semantics, budget: int | BudgetPlan, *,
                     control: engine.Control | None = None) -> JobResult:
    """One range of a heavy count's depth-first search tasks (a :class:`~distsm.kernels.dfs.SearchShare` slice) on
    ``site``'s resident whole-graph index: the matches of those tasks, in the count's own terms (subgraphs, or
    embeddings for a plain count)."""
    t = time.perf_counter()
    index, _, _ = site.whole_graph()
    stages = Count(Placement.of(site.backend, index, site.host_index()),
                   Target(query, sem.match_options, symmetry(query, sem)), budget, control=control)
    search = stages.search(force=True)
    assert search is not None  # a forced search is chosen or raises
    count = stages.run_search(search, tasks)
    return JobResult("inter", None, count, None, time.perf_counter() - t, site.worker,
                     device_bytes=site.device_bytes())


def run_whole_jobs(site: Site, queries: list[Graph], sem: Semantics, budget: int | BudgetPlan, *,
                   control: engine.Control | None = None, split_work: float | None = None,
                   hand_off: HandOff | None = None) -> Iterator[JobResult | None]:
    """Count several queries whole on ``site`` (each one's single job of :func:`whole_query_jobs`), in query order:
    yields the :class:`JobResult` :func:`run_job` gives each (``split_work``: see :func:`job_count`), each as soon
    as it is known, so a caller can act on a heavy one while the others are counted.

    The light queries are counted first, all together (:func:`~distsm.kernels.batch.count_light`); each of the
    others then runs its job alone, on the host without a trial join of its own: the batch's was its trial (on
    R-MAT queries that leave a batch, a second trial made the batch a fifth slower than counting one query at a
    time).  A device's batch also leaves the queries whose levels outgrow its scratch tables
    (``distsm.gpu.small-limit`` rows), untried: there each leftover runs its own trial, as :func:`distsm.count`
    would (2 x H200, 50M-edge R-MAT, 200 small queries: 4.87 s on one worker without it, 2.04 s one at a time).
    A query counted in the batch is charged an equal share of the batch's time.

    ``hand_off`` is asked, before each query counted alone while others are still to be counted alone after it,
    whether to give those later ones to someone else; where it takes them, they are not counted here and their
    places in the output hold None."""
    [work] = whole_query_jobs()
    t = time.perf_counter()
    moved = site.moved_bytes()
    light = _light_counts(site, queries, sem, budget, control)
    left = work if light is None or site.backend.on_device else replace(work, heavy=True)
    light = light or [None] * len(queries)
    counted = sum(found is not None for found in light)
    share = (time.perf_counter() - t) / max(counted, 1)
    moved = site.moved_bytes() - moved
    alone = [k for k, found in enumerate(light) if found is None]
    handed: set[int] = set()
    for k, (q, found) in enumerate(zip(queries, light)):
        if k in handed:
            yield None
        elif found is None:
            later = [j for j in alone if j > k]
            if later and hand_off is not None and hand_off(later):
                handed.update(later)
            yield run_job(site, left, q, sem, budget, control=control, split_work=split_work)
        else:
            yield JobResult(work.stage, work.part, found, None, share, site.worker, bytes_h2d=moved,
                            device_bytes=site.device_bytes())
            moved = 0  # the batch's copies are charged once


def _light_counts(site: Site, queries: list[Graph], sem: Semantics, budget: int | BudgetPlan,
                  control: engine.Control | None) -> list[int | None] | None:
    """The counts of the light ``queries`` joined together on ``site``'s resident whole-graph index (None for the
    others); None where the adjacency is gathered piece by piece or read over a bus (the jobs read it their own
    way, trials included).  Queries the engine refuses (empty or disconnected) are left to their own jobs, which
    raise the engine's error."""
    index, _, adjacency = site.whole_graph()
    if adjacency is not None or site.backend.adjacency_over_bus(index):
        return None
    out: list[int | None] = [None] * len(queries)
    picked = [k for k, q in enumerate(queries) if q.n > 0 and q.is_connected()]
    mine = [queries[k] for k in picked]
    if not mine:
        return out
    cands = site.backend.candidates_of(index, mine, homomorphism=sem.homomorphism)
    # A query that takes the depth-first search goes to its own job at once, as in process: the joint trial's
    # allowance would be spent on a join the search replaces.
    placement = Placement.of(site.backend, index, site.host_index())
    # The batch's candidates are the device's: a query the placement filters on the host (a small label pool)
    # filters there again, cheaply, rather than sampling device arrays with the host's index.
    joint = [i for i, (q, c) in enumerate(zip(mine, cands))
             if Count(placement, Target(q, sem.match_options, symmetry(q, sem)), budget,
                      candidates=list(c) if placement.filter_side(q).backend is site.backend else None
                      ).search() is None]
    found = batch.count_light(site.backend, index,
                              batch.LightBatch([mine[i] for i in joint], sem.match_options,
                                          [symmetry(mine[i], sem).less_than for i in joint]),
                              budget, control=control, candidates=[cands[i] for i in joint])
    counted = dict(zip(joint, found))
    for i, (k, filtered) in enumerate(zip(picked, cands)):
        out[k] = counted.get(i)
        if out[k] is None:  # its own job counts it with the batch's filter
            site.plans.keep_candidates(site.backend, queries[k], sem.homomorphism, list(filtered))
    return out


def concat_rows(chunks: Iterable[np.ndarray], columns: int) -> np.ndarray:
    """One ``int64[rows, columns]`` array of row chunks (empty when there are none)."""
    rows = list(chunks)
    return np.concatenate(rows) if rows else np.zeros((0, columns), np.int64)


def merge(query: str, query_graph_n: int, sem: Semantics, plan: InterPartitionPlan, k: int, results: list[JobResult], *,
          listing: bool = False, limit: int | None = None, plan_seconds: float = 0.0) -> QueryResult:
    """Combine the results of one query's jobs into its :class:`QueryResult`."""
    t = time.perf_counter()
    intra = sorted((p for p in results if p.stage == "intra"), key=lambda p: p.part or 0)  # intra jobs name parts
    inter = [p for p in results if p.stage == "inter"]
    seconds = {"plan": plan_seconds, "intra": sum(p.seconds for p in intra), "inter": sum(p.seconds for p in inter),
               # the longest slice bounds how well the spanning search spreads over workers
               "inter_slice_max": max((p.seconds for p in inter), default=0.0),
               # what slicing cost before the slices counted (indexes built where they run, the cuts)
               "inter_setup": sum(p.setup_seconds for p in inter)}
    result = QueryResult(query, "ok", semantics=sem, plan=plan, partitions=k, seconds=seconds,
                         partial_matches=sum(p.partial_matches for p in inter),
                         gathered_bytes=sum(p.gathered_bytes for p in inter),
                         bytes_h2d=sum(p.bytes_h2d for p in results), workers=sorted({p.worker for p in results}))
    for p in results:
        result.peak_device_bytes[p.worker] = max(result.peak_device_bytes.get(p.worker, 0), p.device_bytes)
    if intra:
        result.intra = [p.count for p in intra]
        result.inter = sum(p.count for p in inter)
    if listing:
        rows = concat_rows((p.rows for p in intra + inter if p.rows is not None and p.rows.shape[0]), query_graph_n)
        result.rows = rows if limit is None else rows[:limit]
        result.count = int(result.rows.shape[0])
    else:
        result.count = sum(p.count for p in results if p.automorphisms is None)
        embeddings = [(p.count, p.automorphisms) for p in results if p.automorphisms is not None]
        if embeddings:
            total, automorphisms = sum(c for c, _ in embeddings), embeddings[0][1]
            if total % automorphisms:
                raise RuntimeError(f"{query}: its slices found {total} embeddings, not a multiple of |Aut| = "
                                   f"{automorphisms}")
            result.count += total // automorphisms
    seconds["merge"] = time.perf_counter() - t
    return result


def release_device_memory(backend: Backend) -> None:
    """Hand the device memory pool's free blocks back to the device (after a cancelled join, or when a worker's
    cache is torn down); a no-op on the CPU backend."""
    backend.release_memory()


def deadline(timeout: float | None,
             progress: Callable[[int, int], None] | None = None) -> engine.Control | None:
    """A :class:`~distsm.kernels.engine.Control` that cancels a join ``timeout`` seconds from now and reports
    ``progress`` (None when neither is asked for)."""
    if timeout is None:
        return None if progress is None else engine.Control(progress=progress)
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    end = time.monotonic() + timeout
    return engine.Control(cancelled=lambda: time.monotonic() > end, progress=progress)


@contextmanager
def timeout_error(timeout: float | None, backend: Backend) -> Iterator[None]:
    """Turn a join cancelled by :func:`deadline` into a ``TimeoutError`` once its device tables are freed."""
    try:
        yield
    except engine.JoinCancelled as e:
        # The traceback's finished frames hold the cancelled join's device tables: clear them so that the pool
        # can give their blocks back.
        tb.clear_frames(e.__traceback__)
        release_device_memory(backend)
        raise TimeoutError(f"the search did not finish within timeout={timeout} seconds; its work was stopped "
                           "and its device memory freed") from None
