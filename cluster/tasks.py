"""What runs on Dask workers: the task functions, over a :class:`~distsm.cluster.worker_site.WorkerSite` plugin per
:class:`~distsm.Matcher`.

A matcher registers one :class:`WorkerSite` under a name of its own; on every worker (including workers that
join later) it keeps what the matcher's tasks loaded: the partition store, each part's index on the worker's
device, the whole graph's adjacency and the candidate filters and planned searches of the last few queries (each
query is planned once per worker, however many of its slices the worker runs).  A part is loaded once per worker
and reused by every later query (out of core, while it fits); :meth:`Matcher.close() <distsm.Matcher.close>`
unregisters the plugin and its teardown releases all of it, device memory included.  How much of the whole graph
a worker keeps on its device follows its device budget (see :class:`WorkerSite`).

Tasks run :mod:`distsm.plan.execute` jobs with the plugin as their :class:`~distsm.plan.site.Site`, so a worker
computes exactly what the in-process executor computes.  They are pure functions of their arguments and the store:
when a worker dies, the scheduler runs its tasks elsewhere and the answers do not change.  A running job stops
within one chunk once Dask releases its task (the batch was cancelled or timed out, or its client went away):
:func:`task_control` watches the task's state on the worker.
"""

from __future__ import annotations

import logging
import math
import time
import traceback
import uuid
from dataclasses import dataclass, replace
from typing import Any, cast

from distributed import get_worker

from distsm.cluster.monitor import DONE_TOPIC
from distsm.cluster.worker_site import WorkerSite, state_of, task_control
from distsm.config import cluster_options, under_snapshot
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.dfs import SearchShare
from distsm.plan.execute import HandOff, Job, run_job, run_search_slice, run_slice, run_whole_jobs, whole_query_jobs
from distsm.plan.results import Heavy, JobResult, Listing, QueryResult, merge
from distsm.plan.inter import InterPartitionPlan
from distsm.plan.split import SharedPlan
from distsm.plan.split import slices as split_slices
from distsm.residency import resident_bytes
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork

logger = logging.getLogger(__name__)


def load_part(name: str, part: int | None) -> dict[str, Any]:
    """Load one part onto this worker (task ``distsm-load-*``), and what every spanning search reads; ``part`` None
    loads only that (a worker that owns no part: a graph held whole by more workers than it has parts, whose
    searches are cut over every worker); a GPU worker's first load also warms its process
    (:meth:`WorkerSite.warm`)."""
    t = time.perf_counter()
    state = state_of(name)
    warm = state.warm()  # first: its peak device bytes are not the site's, which start with the loads
    local = None if part is None else state.residency.part(part)
    adjacency = state.whole_graph()[0]
    part_bytes = 0 if local is None else int(state.backend.index(local.graph).nbytes)
    state.residency.prepare_refinement()
    state.cross_vertices()
    return {"part": part, "worker": state.worker, "vertices": 0 if local is None else local.graph.n,
            "edges": 0 if local is None else local.graph.m,
            "bytes": part_bytes, "adjacency": state.mode, "device_budget": state.budget,
            "adjacency_bytes": resident_bytes(state.mode, adjacency),
            "shared_host_bytes": int(getattr(state.backend, "shared_host_bytes", 0)),
            "heap_temporaries": state.heap_temporaries, "warm_seconds": warm,
            "seconds": time.perf_counter() - t}


@under_snapshot
def job(name: str, work: Job, query: Graph, sem: Semantics, budget: int | None, listing: bool = False,
        limit: int | None = None) -> JobResult:
    """One job of a query (tasks ``distsm-intra-*`` and ``distsm-inter-*``, the slices of a heavy whole query
    included, and inside ``distsm-whole-*``); stops when the task is released."""
    state = state_of(name)
    return run_job(state, work, QueryWork(query, sem, state.job_budget(budget), task_control()), listing=listing,
                   limit=limit)


@dataclass(frozen=True)
class QueryTask:
    """One query of a batch as its tasks see it: its name, graph and semantics, the plan the client made, the
    number of parts, the batch, the client's planning seconds, listing or counting (at most ``limit`` rows),
    ``distribution``: ``(how, why)`` the client spread it (see :meth:`distsm.Matcher.distribution`), and ``split``:
    for a count sent whole to be measured on its worker, the number of slices to split it into if its counting
    plan shows it heavy (None: never split)."""

    name: str
    graph: Graph
    sem: Semantics
    plan: InterPartitionPlan
    k: int
    batch: str
    plan_seconds: float = 0.0
    listing: bool = False
    limit: int | None = None
    distribution: tuple[str, str] = ("", "")
    split: int | None = None


def combine(query: QueryTask, *results: JobResult) -> QueryResult:
    """Merge one query's job results (task ``distsm-merge-*``) and report the query to the scheduler."""
    result = merged(query, list(results))
    report([result], query.batch)
    return result


def merged(query: QueryTask, results: list[JobResult]) -> QueryResult:
    """One query's :class:`~distsm.plan.results.QueryResult` from its job results, with how the client spread it."""
    listing = Listing(query.graph.n, query.limit) if query.listing else None
    result = merge(query.name, query.sem, query.plan, query.k, results, listing=listing,
                   plan_seconds=query.plan_seconds)
    result.distribution, result.distribution_reason = query.distribution
    return result


def report(results: list[QueryResult], batch: str) -> None:
    """Tell the scheduler's monitor that ``results`` (queries of ``batch``) are done: one event for all of them."""
    get_worker().log_event(DONE_TOPIC, {"batch": batch, "queries": {
        r.query: {"count": r.count, "gathered_bytes": r.gathered_bytes} for r in results}})


#: Seconds a group task waits between two questions to the scheduler whether it should hand off the rest of its
#: queries: one costs a round trip, and a group counts many millisecond queries alone, so asking before each would
#: add a few percent to a small batch.
HAND_OFF_EVERY = 0.1

#: Dask priority of the slices a worker splits a heavy whole query into: above every query of a batch (whose
#: priorities count up from 0), so the query that is holding its worker's slot finishes first.
SPLIT_PRIORITY = 1 << 30


def slice_count(work: float, split_work: float, most: int) -> int:
    """How many slices a heavy count of estimated ``work`` (on NumPy's scale) is cut into: one per ``split_work``
    of it, at least two and at most ``most``.  A slice costs a fixed few milliseconds on either side (its restricted
    core join, its launches and task), about 1.5e6 of the plans' work units on NumPy's scale: slices of
    ``split-work`` keep that near 5%.  Four per worker for every heavy query made the 0.5-1.4 s queries of a
    small batch on 8 CPU workers 45-85% slower in 15-40 ms slices."""
    return max(2, min(most, math.ceil(work / max(split_work, 1.0))))


def slice_priority(work: float) -> int:
    """The Dask priority of a slice estimated at ``work`` (its share of its count's plan cost): above
    :data:`SPLIT_PRIORITY`, and the more work the higher, so that of the slices waiting on the cluster the largest
    start first (longest processing time first) and the batch ends on small ones (8 CPU workers: one slice of 1 s
    started last, while most workers had nothing left for 0.6 s)."""
    # One step per 1e3 of estimated work keeps the order among slices of a few entries up to those of ~1e12.
    return SPLIT_PRIORITY + min(int(max(work, 0.0) / 1e3), SPLIT_PRIORITY - 1)


@under_snapshot
def whole(name: str, query: QueryTask, budget: int | None) -> QueryResult:
    """A listing sent whole to this worker (task ``distsm-whole-*``; its rows come back in the task's result): its
    one job and its merge in one task.  Counts sent whole go in groups (:func:`wholes`)."""
    [work] = whole_query_jobs()
    state = state_of(name)
    measured = run_job(state, work, QueryWork(query.graph, query.sem, state.job_budget(budget), task_control()),
                       listing=query.listing, limit=query.limit)
    result = merged(query, [measured])
    report([result], query.batch)
    return result


@under_snapshot
def wholes(name: str, queries: list[QueryTask], budget: int | None) -> list[QueryResult]:
    """A group of counting queries of one batch sent whole to this worker (task ``distsm-wholes-*``): each one's
    job and merge, their counts taken together by :func:`~distsm.plan.execute.run_whole_jobs`, in one task, so a
    batch of small queries costs the scheduler a few tasks per worker.  Returns the queries' results in order.

    Where the queries have a ``split`` (counts on the engine's counting paths; a group's queries share it), a query
    that passes its trial joins and whose counting plan (from sampled walks over its candidate edges) is estimated
    at ``distsm.cluster.split-threshold`` and ``split-work`` or more is heavy: rather than count it alone, this task
    cuts it into slices that share its plan (one per ``split-work`` of it, at most ``split``: :func:`slice_count`)
    and submits them to the cluster (tasks ``distsm-inter-*``, any worker) as soon as it is found, while it goes on
    with the group's other queries (:func:`_submit_shared`); a heavy query without a plan is cut into slices of its
    global join once the group is counted (:func:`_finish`).  The task then waits seceded (this worker runs slices
    meanwhile) and merges each heavy query's counts; the group's light queries are reported done first.  Heaviness
    is measured on the worker, not guessed by the client, whose static estimates cannot tell a query that takes a
    millisecond from one that takes a minute.  A query that fails comes back as an ``error`` result (the others of
    its group are counted one by one); the task itself fails only when all of it does (e.g. the matcher was
    closed).  Cancelling the task stops its running joins within a chunk, and its slices."""
    state = state_of(name)
    control = task_control()
    split = queries[0].split  # a group's queries share it
    submitted: dict[int, list[Any]] = {}  # query index -> its slices' futures
    handed: dict[int, Any] = {}  # query index -> the future of its own group task, for another worker
    try:
        measured = _measured(name, state, queries, budget, control, submitted, handed)
        results: list[QueryResult | None] = [m if isinstance(m, QueryResult) else None if m is None or m.heavy
                                             else merged(q, [m]) for q, m in zip(queries, measured)]
        report([r for r in results if r is not None and r.ok], queries[0].batch)
        # The group waits on its slowest heavy or handed query, not on their sum: all of them are out already.
        waits = [*submitted.items(), *((i, [f]) for i, f in handed.items())]
        for (i, _), found in zip(waits, _gathered([fs for _, fs in waits], control)):
            if isinstance(found, Exception):
                results[i] = done = _failed(state, queries[i], found)
            elif i in handed:
                [results[i]] = cast(list[list[QueryResult]], found)[0]  # its group task's; reported there
                continue
            else:
                how = "sharing its counting plan" if cast(Heavy, cast(JobResult, measured[i]).heavy).shared else \
                    "by ranges of its depth-first search's tasks"
                results[i] = done = _sliced(queries[i], cast(JobResult, measured[i]), found, state.worker, how)
            if done.ok:
                report([done], queries[0].batch)
        for i, r in enumerate(results):
            if r is None:
                q, m = queries[i], cast(JobResult, measured[i])
                try:
                    results[i] = done = _finish(name, state, q, m, budget, split, control)
                except engine.JoinCancelled:
                    raise
                except Exception as e:
                    results[i] = _failed(state, q, e)
                else:
                    report([done], q.batch)
        return cast(list[QueryResult], results)
    finally:
        _cancel([f for fs in submitted.values() for f in fs] + list(handed.values()))


def _measured(name: str, state: WorkerSite, queries: list[QueryTask], budget: int | None, control: engine.Control,
              submitted: dict[int, list[Any]], handed: dict[int, Any]) -> list[JobResult | QueryResult | None]:
    """Each query's job result in order (an ``error`` result where its own count failed, after the group's joint
    count failed), with the slices of each heavy one that has a counting plan submitted into ``submitted`` as soon
    as it is found.

    Before a query the group counts alone (asking the scheduler at most every :data:`HAND_OFF_EVERY` seconds),
    while worker threads of the cluster are free and no task is queued (the batch's tail), the queries still to be
    counted alone after it are handed to the cluster, each as a group of its own (into ``handed``; None in their
    places), which is split over the cluster in turn if it proves heavy: a group is packed by estimates that can be
    far off (a 0.9 s query ranked 19th of 200 put 18% of a small batch's time into one of 35 groups), and its
    worker would otherwise count the rest of it while others idle."""
    sem, split = queries[0].sem, queries[0].split
    opts = cluster_options()
    split_work = max(opts.split_threshold, opts.split_work) if split is not None else None
    budgets = state.job_budget(budget)

    hand_off = _hand_off(name, state, queries, budget, handed)

    def taken(i: int, m: JobResult | QueryResult | None) -> JobResult | QueryResult | None:
        if isinstance(m, JobResult) and m.heavy is not None and m.heavy.search is not None:
            assert split is not None  # only a split_work finds a query heavy
            # The search was cut finely (any cluster's count); this one's slices number what the matcher asks.
            submitted[i] = _submit_search(name, queries[i], m.heavy.search.coarsened(split), budget)
            return m
        if isinstance(m, JobResult) and m.heavy is not None and m.heavy.shared is not None:
            assert split is not None  # only a split_work finds a query heavy
            submitted[i], cut_s = _submit_shared(name, state, queries[i], m, budget, split)
            # Cutting the slices is part of the work that found the query heavy, and of what slicing cost.
            return replace(m, seconds=m.seconds + cut_s, setup_seconds=m.setup_seconds + cut_s)
        return m

    try:
        return [taken(i, m) for i, m in enumerate(run_whole_jobs(state, [q.graph for q in queries], sem, budgets,
                                                                 control=control, split_work=split_work,
                                                                 hand_off=hand_off))]
    except engine.JoinCancelled:
        raise
    except Exception:
        if len(queries) == 1:
            raise
        _cancel([f for fs in submitted.values() for f in fs] + list(handed.values()))
        submitted.clear()
        handed.clear()
        return [taken(i, _alone(state, q, budgets, control, split_work)) for i, q in enumerate(queries)]


def _hand_off(name: str, state: WorkerSite, queries: list[QueryTask], budget: int | None,
              handed: dict[int, Any]) -> HandOff:
    """The ``hand_off`` of :func:`_measured`'s group: asks the scheduler at most every :data:`HAND_OFF_EVERY`
    seconds and, while worker threads are free and no task is queued, submits each later query as a group of its
    own (into ``handed``)."""
    asked = [-math.inf]  # when this group last asked the scheduler

    def hand_off(later: list[int]) -> bool:
        now = time.perf_counter()
        if now - asked[0] < HAND_OFF_EVERY:
            return False
        asked[0] = now
        if _thread_load()[1] == 0:
            return False
        from distributed import get_client

        client = get_client()
        for j in later:
            how, why = queries[j].distribution
            q = replace(queries[j], distribution=(how, f"{why}; handed by worker {state.worker} to a free worker"))
            handed[j] = client.submit(wholes, name, [q], budget, key=f"distsm-wholes-{uuid.uuid4().hex}", pure=False,
                                      priority=SPLIT_PRIORITY)
        logger.info("worker %s hands %d queries of its group to free workers", state.worker, len(later))
        return True

    return hand_off


def _alone(state: WorkerSite, query: QueryTask, budget: BudgetPlan, control: engine.Control,
           split_work: float | None) -> JobResult | QueryResult:
    """``query`` counted by itself (its group's joint count failed): its job's result, or its ``error`` result."""
    try:
        [result] = run_whole_jobs(state, [query.graph], query.sem, budget, control=control, split_work=split_work)
        return cast(JobResult, result)  # nothing handed off: a result
    except engine.JoinCancelled:
        raise
    except Exception as e:
        return _failed(state, query, e)


def _failed(state: WorkerSite, query: QueryTask, error: Exception) -> QueryResult:
    """The ``error`` result of one query of a group (its traceback formatted here: tracebacks do not pickle)."""
    logger.exception("query %s failed on worker %s", query.name, state.worker)
    return QueryResult.failed(query.name, "error", "".join(traceback.format_exception_only(type(error), error))
                              .strip(), error)


def _submit_shared(name: str, state: WorkerSite, query: QueryTask, measured: JobResult, budget: int | None,
                   split: int) -> tuple[list[Any], float]:
    """The futures of the slices a heavy whole query with a counting plan (``measured.heavy.shared``) is split
    into, and the seconds spent cutting them: about :func:`slice_count` slices (at most ``split``) that run its
    plan over its index (:mod:`distsm.plan.split`).

    Those slices together do the whole count's work, so such a query is always split: its slices go before the
    batch's queries, the largest first (:func:`slice_priority`), which keeps a batch's heaviest queries off its
    critical path."""
    from distributed import get_client

    heavy = cast(Heavy, measured.heavy)
    shared = cast(SharedPlan, heavy.shared)
    pieces = slice_count(shared.host_cost, cluster_options().split_work, split)
    t = time.perf_counter()
    cuts = split_slices(shared, get_backend("numpy"), query.graph, query.sem, pieces)
    cut_s = time.perf_counter() - t
    logger.info("worker %s splits query %s into %d slices in %.3f s: %s", state.worker, query.name, len(cuts),
                cut_s, heavy.reason)
    client = get_client()
    ref = client.scatter(shared, hash=False)  # each worker fetches the index once, not once per slice
    return [client.submit(shared_slice, name, ref, restrict, query.graph, query.sem, budget,
                          key=f"distsm-inter-{uuid.uuid4().hex}", pure=False,
                          priority=slice_priority(share * shared.host_cost))
            for restrict, share in cuts], cut_s


def _submit_search(name: str, query: QueryTask, share: SearchShare, budget: int | None) -> list[Any]:
    """The futures of the task ranges a heavy count's depth-first search was cut into (``share``, of about equal
    estimated work), any worker each, the larger first as :func:`_submit_shared`'s are: every worker holds the
    whole graph's index and ranks it alike, so a range means the same tasks wherever it runs."""
    from distributed import get_client

    client = get_client()
    per = share.work / max(len(share.ranges), 1)
    return [client.submit(search_slice, name, tasks, query.graph, query.sem, budget,
                          key=f"distsm-inter-{uuid.uuid4().hex}", pure=False, priority=slice_priority(per))
            for tasks in share.ranges]


@under_snapshot
def search_slice(name: str, tasks: tuple[int, int], query: Graph, sem: Semantics, budget: int | None) -> JobResult:
    """One range of a heavy count's depth-first search tasks (a ``distsm-inter-*`` task); stops when the task is
    released."""
    state = state_of(name)
    return run_search_slice(state, tasks, QueryWork(query, sem, state.job_budget(budget), task_control()))


def _sliced(query: QueryTask, measured: JobResult, found: list[JobResult], worker: str, how: str) -> QueryResult:
    """The result of ``query``, found heavy (``measured``) and split by ``worker`` into slices that found ``found``
    (``how``: in words)."""
    reason = cast(Heavy, measured.heavy).reason
    why = (f"sent whole ({query.distribution[1]}), then split into {len(found)} slices by worker {worker}, "
           f"{how}: {reason}")
    plan = replace(query.plan, reason=f"{query.plan.reason}; split into slices: {reason}")
    # The work that found the query heavy (trials, refinement, planning) counts as a job result of no matches.
    return merged(replace(query, plan=plan, distribution=("sliced", why)), [measured, *found])


def _finish(name: str, state: WorkerSite, query: QueryTask, measured: JobResult, budget: int | None,
            split: int | None, control: engine.Control) -> QueryResult:
    """The result of a whole query from its job's result ``measured``.  A heavy one without a counting plan
    (``measured.heavy``; a count that takes the general join: :func:`_submit_shared` splits the others) is split
    into about ``split`` slices of the global join run over the cluster (see :func:`wholes`).  Those slices plan
    themselves and repeat part of each other's work (measured up to 7 times more), so the query is split only when
    no other task waits for a worker thread, and counted whole here otherwise, by the stages that found it heavy
    (``heavy.resume``: its trial and plan are not run again)."""
    from distributed import get_client

    heavy = measured.heavy
    if heavy is None:
        return merged(query, [measured])
    assert split is not None  # only a split_work finds a query heavy
    waiting = _thread_load()[0]
    if waiting and heavy.resume is not None:
        t = time.perf_counter()
        count = heavy.resume()
        counted = replace(measured, count=count, seconds=time.perf_counter() - t, heavy=None,
                          device_bytes=state.device_bytes())
        why = (f"{query.distribution[1]}; heavy ({heavy.reason}) but counted whole by worker {state.worker}: "
               f"{waiting} other tasks waited for a worker thread")
        return merged(replace(query, distribution=("whole", why)), [measured, counted])
    slices = state.slices(query.graph, query.sem, split)
    logger.info("worker %s splits query %s into %d slices: %s", state.worker, query.name, len(slices), heavy.reason)
    client = get_client()
    futures = [client.submit(job, name, Job("inter", start=start, second=second, heavy=True), query.graph, query.sem,
                             budget, key=f"distsm-inter-{uuid.uuid4().hex}", pure=False, priority=SPLIT_PRIORITY)
               for start, second in slices]
    try:
        [found] = _gathered([futures], control)
    finally:
        _cancel(futures)
    if isinstance(found, Exception):
        raise found
    return _sliced(query, measured, found, state.worker, "each planning its slice of the global join")


@under_snapshot
def shared_slice(name: str, shared: SharedPlan, restrict: dict[int, range], query: Graph, sem: Semantics,
                 budget: int | None) -> JobResult:
    """One slice of a heavy count split by its plan (a ``distsm-inter-*`` task; see :mod:`distsm.plan.split`);
    stops when the task is released."""
    state = state_of(name)
    return run_slice(state, shared, restrict, QueryWork(query, sem, state.job_budget(budget), task_control()))


def _thread_load() -> tuple[int, int]:
    """The cluster's tasks that wait for a worker thread now and its free threads (asked of the scheduler; see
    :func:`thread_load`)."""
    from distributed import get_client

    waiting, free = get_client().run_on_scheduler(thread_load)
    return int(waiting), int(free)


def thread_load(dask_scheduler: Any) -> tuple[int, int]:
    """``(waiting, free)`` of ``dask_scheduler``: tasks ready to run that no worker thread runs (queued on the
    scheduler, or sent to a worker beyond its threads), and worker threads that run no task, none while any task
    waits (seceded tasks, like a whole query waiting for its slices, hold no thread)."""
    busy = [(ws.nthreads, len(ws.processing) - len(ws.long_running)) for ws in dask_scheduler.workers.values()]
    waiting = len(dask_scheduler.queued) + sum(max(b - n, 0) for n, b in busy)
    return waiting, 0 if waiting else sum(max(n - b, 0) for n, b in busy)


def _gathered(lists: list[list[Any]], control: engine.Control) -> list[list[JobResult] | Exception]:
    """The results of the task lists ``lists`` (each query's slices, submitted to the cluster), waited for seceded
    from this worker's thread pool: per list its tasks' results, or the error of one that failed (the list's other
    tasks are cancelled).  Cancelling this task (``control``) cancels them all."""
    from distributed import wait, worker_client

    if not lists:
        return []
    futures = [f for fs in lists for f in fs]
    with worker_client() as client:
        try:
            pending = set(futures)
            while pending:
                try:
                    done, pending = wait(pending, timeout=0.2, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    control.check()
                    continue
                failed = {f for f in done if f.status != "finished"}
                if failed:  # the lists they belong to are settled: stop waiting for the rest of those
                    pending -= {f for fs in lists if set(fs) & failed for f in fs}
            out: list[list[JobResult] | Exception] = []
            for fs in lists:
                try:
                    out.append(client.gather(fs))
                except Exception as e:
                    out.append(e)
            return out
        finally:
            # Before leaving worker_client: its rejoin waits for a thread of this worker, which the slices left
            # running may hold until they end.
            _cancel(futures)


def _cancel(futures: list[Any]) -> None:
    """Cancel those of ``futures`` not done yet (slices nobody will wait for)."""
    pending = [f for f in futures if not f.done()]
    if pending:
        from distributed import get_client

        get_client().cancel(pending)
