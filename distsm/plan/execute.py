"""Executing a partitioned plan: which jobs a query runs, and running one job (what jobs find and how one
query's results merge: :mod:`distsm.plan.results`; what a site keeps between jobs: :mod:`distsm.plan.site`).

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

import time
import traceback as tb
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import batch, engine
from distsm.kernels.vertex_sets import restricted
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.counting import Count, Target
from distsm.kernels.placement import Placement
from distsm.plan.inter import EdgeGroup, InterPartitionPlan, Strategy
from distsm.plan.results import Heavy, JobResult, concat_rows
from distsm.plan.search import SpanningSearch, Span, WholeGraph, inter_count, inter_rows, intra_task, symmetry
from distsm.plan.slices import Slice
from distsm.plan.site import Site
from distsm.plan.split import SharedPlan, count_slice
from distsm.plan.work import QueryWork
from distsm.semantics import Semantics

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


#: Asked by :func:`run_whole_jobs` with the indices of the queries still to be counted alone after the next one:
#: True where it took them (a cluster hands them to idle workers).
HandOff = Callable[[list[int]], bool]


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


def _search(site: Site, graph: WholeGraph, query: Graph, sem: Semantics, span: Span) -> SpanningSearch:
    return site.plans.search(site.backend, graph.index, query, sem, span.group, span.spanning_only)


def job_count(site: Site, job: Job, work: QueryWork, *, stats: dict[str, int] | None = None,
              split_work: float | None = None) -> int | Heavy:
    """The number of matches of ``work`` that ``job`` finds; ``stats`` accumulates the spanning searches' work.
    Given ``split_work``, a whole query whose counting plan is estimated at that much work or more (or whose
    candidate-edge index fits no budget) is not counted: :class:`Heavy` says why."""
    if job.stage == "intra":
        assert job.part is not None  # an intra job names its part
        with site.part(job.part) as local:
            return intra_task(site.backend, local, work, count_only=True)
    graph, spans = _spans(site, job)
    if job.groups is None and graph.adjacency is None:
        # The resident (or zero-copy) index serves the engine's counting paths, which beat the plain join on heavy
        # queries (the trailing count); a slice of the global join is that count restricted to the slice's ids.
        restrict = _slice_restriction(site, graph, work.query, work.sem, spans[0])
        return whole_count(site, Placement.of(site.backend, graph.index, site.host_index()), job, work, restrict,
                           split_work if job.whole else None)
    return sum(inter_count(site.backend, graph, work, span, stats=stats,
                           search=_search(site, graph, work.query, work.sem, span))
               for span in spans)


def whole_count(site: Site, placement: Placement, job: Job, work: QueryWork, restrict: dict[int, Any],
                split_work: float | None) -> int | Heavy:
    """A count of ``work`` over the whole graph by the engine's stages: a whole query (``light() or run(plan())``,
    or :class:`Heavy` past ``split_work``), or a slice restricted by ``restrict``, which runs the plan its site
    shares among the query's slices (:class:`SharedCount`) where that plan's core holds the restricted vertices."""
    query, sem, budget, control = work.query, work.sem, work.budget, work.control
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
        return Heavy(planned.reason, resume=lambda: stages.run(planned))
    # A plan bound for a device is judged by its NumPy-equivalent work: judged by its own, counts of a tenth of a
    # second were split, and their slices added up to several times their whole count (measurements: the report).
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


def job_rows(site: Site, job: Job, work: QueryWork, *, limit: int | None = None) -> Iterator[np.ndarray]:
    """Stream the global-id rows of ``work`` that ``job`` finds (at most ``limit``)."""

    def chunks() -> Iterator[np.ndarray]:
        if job.stage == "intra":
            assert job.part is not None  # an intra job names its part
            with site.part(job.part) as local:
                yield from intra_task(site.backend, local, work, count_only=False, limit=limit)
            return
        graph, spans = _spans(site, job)
        for span in spans:
            yield from inter_rows(site.backend, graph, work, span, limit=limit,
                                  search=_search(site, graph, work.query, work.sem, span))

    return engine.take(chunks(), limit)


def run_job(site: Site, job: Job, work: QueryWork, *, listing: bool = False, limit: int | None = None,
            split_work: float | None = None) -> JobResult:
    """Run ``job`` of ``work`` on ``site``: its count, or with ``listing`` its rows (at most ``limit``), and its cost
    (``split_work``: see :func:`job_count`)."""
    t = time.perf_counter()
    moved = site.moved_bytes()
    stats: dict[str, int] = {}
    rows, heavy = None, None
    if listing:
        rows = concat_rows(job_rows(site, job, work, limit=limit), work.query.n)
        count = int(rows.shape[0])
    else:
        found = job_count(site, job, work, stats=stats, split_work=split_work)
        count, heavy = (0, found) if isinstance(found, Heavy) else (found, None)
    return JobResult(job.stage, job.part, count, rows, time.perf_counter() - t, site.worker, stats.get("partial", 0),
                     4 * stats.get("gathered", 0), site.moved_bytes() - moved, site.device_bytes(),
                     site.adjacency_choice(), heavy)


def run_slice(site: Site, shared: SharedPlan, restrict: dict[int, range], work: QueryWork) -> JobResult:
    """One slice of a heavy count split by ``shared`` (see :mod:`distsm.plan.split`) on ``site``: the matches
    whose images lie in ``restrict`` (embeddings for a unique count, which the merge divides)."""
    t = time.perf_counter()
    index, _, _ = site.whole_graph()
    placement = Placement.of(site.backend, index, site.host_index())
    ce = site.plans.shared_index(shared, shared.runner(placement).backend)
    setup = time.perf_counter() - t
    count = count_slice(placement, shared, ce, work, restrict)
    return JobResult("inter", None, count, None, time.perf_counter() - t, site.worker,
                     device_bytes=site.device_bytes(), adjacency=site.adjacency_choice(),
                     automorphisms=shared.automorphisms, setup_seconds=setup)


def run_search_slice(site: Site, tasks: tuple[int, int], work: QueryWork) -> JobResult:
    """One range of a heavy count's depth-first search tasks (a :class:`~distsm.kernels.dfs.SearchShare` slice) on
    ``site``'s resident whole-graph index: the matches of those tasks, in the count's own terms (subgraphs, or
    embeddings for a plain count)."""
    t = time.perf_counter()
    index, _, _ = site.whole_graph()
    query, sem = work.query, work.sem
    stages = Count(Placement.of(site.backend, index, site.host_index()),
                   Target(query, sem.match_options, symmetry(query, sem)), work.budget, control=work.control)
    search = stages.search(force=True)
    assert search is not None  # a forced search is chosen or raises
    count = stages.run_search(search, tasks)
    return JobResult("inter", None, count, None, time.perf_counter() - t, site.worker,
                     device_bytes=site.device_bytes(), adjacency=site.adjacency_choice())


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
    would (without that, such a batch ran more than twice as long as its queries one at a time: measurements in the
    report).
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
            yield run_job(site, left, QueryWork(q, sem, budget, control), split_work=split_work)
        else:
            yield JobResult(work.stage, work.part, found, None, share, site.worker, bytes_h2d=moved,
                            device_bytes=site.device_bytes(), adjacency=site.adjacency_choice())
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
    cands = site.backend.candidates_of(index, mine, homomorphism=sem.homomorphism,
                                       room=BudgetPlan.of(budget).filter_bytes())
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
    end = time.monotonic() + timeout
    return engine.Control(cancelled=lambda: time.monotonic() > end, progress=progress)


class timeout_error:  # noqa: N801 - used as a context manager, like contextlib's lower-case ones
    """Turn a join cancelled by :func:`deadline` into a ``TimeoutError`` once its device tables are freed.  A class,
    not a generator-based context manager: every count enters one, and the generator cost a light count a
    microsecond."""

    def __init__(self, timeout: float | None, backend: Backend):
        self.timeout, self.backend = timeout, backend

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        if not isinstance(error, engine.JoinCancelled):
            return
        # The traceback's finished frames hold the cancelled join's device tables: clear them so that the pool
        # can give their blocks back.
        tb.clear_frames(trace)
        release_device_memory(self.backend)
        raise TimeoutError(f"the search did not finish within timeout={self.timeout} seconds; its work was stopped "
                           "and its device memory freed") from None
