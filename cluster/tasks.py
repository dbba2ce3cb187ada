"""What runs on Dask workers: a :class:`WorkerSite` plugin per :class:`~distsm.Matcher`, and the task functions.

A matcher registers one :class:`WorkerSite` under a name of its own; on every worker (including workers that
join later) it keeps what the matcher's tasks loaded: the partition store, each part's index on the worker's
device, the whole graph's adjacency and the candidate filters and planned searches of the last few queries (each
query is planned once per worker, however many of its slices the worker runs).  A part is loaded once per worker
and reused by every later query (out of core, while it fits); :meth:`Matcher.close() <distsm.Matcher.close>`
unregisters the plugin and its teardown releases all of it, device memory included.  How much of the whole graph
a worker keeps on its device follows its device budget (see :class:`WorkerSite`).

Tasks run :mod:`distsm.plan.execute` jobs with the plugin as their :class:`~distsm.plan.execute.Site`, so a worker
computes exactly what the in-process executor computes.  They are pure functions of their arguments and the store:
when a worker dies, the scheduler runs its tasks elsewhere and the answers do not change.  A running job stops
within one chunk once Dask releases its task (the batch was cancelled or timed out, or its client went away):
:func:`task_control` watches the task's state on the worker.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from distsm.cluster.allocator import set_mmap_threshold
from distsm.config import cluster_options
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.budget import BudgetPlan, default_budget
from distsm.kernels.gather import HostAdjacency
from distsm.kernels.index import DataIndex
from distsm.partitioned import (Shares, default_device_budget, device_peak_bytes, out_of_core_shares,
                                resident_bytes, resolve_adjacency)
from distsm.plan.execute import (Job, PlanCache, Piece, QueryResult, merge, release_device_memory, run_job,
                                 whole_query_jobs)
from distsm.plan.inter import InterPartitionPlan
from distsm.plan.slices import Slice, global_slices
from distsm.semantics import Semantics

logger = logging.getLogger(__name__)


class WorkerSite(WorkerPlugin):
    """One matcher's cache on one worker (a ``distributed`` worker plugin), and the :class:`~distsm.plan.execute.Site`
    its jobs run on.

    Where spanning searches read the whole graph's adjacency is decided per worker from its device budget (see
    :func:`~distsm.partitioned.resolve_adjacency`): on the device when the index fits, else out of core, where the
    device holds only the O(|V|) arrays and the adjacency stays in the partition store's memory-mapped files,
    which every worker of a host shares (one host-memory copy per node): read in place (``"host"``; on a GPU the
    mapped pages are page-locked and read over the bus) or gathered per table chunk (``"gather"``).  Out of core,
    the parts this worker searches stay resident while they fit in their share of the budget and are reloaded
    otherwise (least recently used first out).  On setup it raises the worker process's mmap threshold
    (``distsm.cluster.mmap-threshold``, see :mod:`distsm.cluster.allocator`) so the joins' host temporaries are not
    mapped afresh under the nanny's allocator setting.

    Args:
        name: the plugin's name (unique per matcher; tasks find their state by it).
        store_dir: the partition store's directory (every worker must be able to read it).
        backend_name: the engine backend (``"auto"``, ``"numpy"`` or ``"cupy"``).
        adjacency: ``"auto"``, ``"device"``, ``"host"`` or ``"gather"``.
        device_budget: device bytes this worker may hold (None: :func:`default_device_budget`).
    """

    def __init__(self, name: str, store_dir: str, backend_name: str, adjacency: str = "auto",
                 device_budget: int | None = None):
        self.name = name
        self.store_dir = store_dir
        self.backend_name = backend_name
        self.adjacency = adjacency
        self.device_budget = device_budget

    def setup(self, worker: Any) -> None:
        threshold = cluster_options().mmap_threshold
        self.heap_temporaries = threshold is not None and set_mmap_threshold(threshold)
        self.worker = str(worker.name)
        self.backend = get_backend(self.backend_name)
        self.budget = self.device_budget or default_device_budget(self.backend)
        self._lock = threading.RLock()  # builders nest (a part needs the store)
        self._cache: dict[tuple, Any] = {}
        self._parts: OrderedDict[int, tuple[Any, int]] = OrderedDict()  # out of core: resident parts, LRU first
        self.plans = PlanCache()
        self.mode: str  # the adjacency mode: set by whole_graph(), which every reader calls first
        self.part_bytes_h2d = 0
        self.peak_part_bytes = 0

    def teardown(self, worker: Any) -> None:
        """Drop every part, index and filter this matcher loaded and give the device memory back."""
        with self._lock:
            for key, value in self._cache.items():
                if key[0] == "part":
                    self.backend.release(value.graph)
            for local, _ in self._parts.values():
                self.backend.release(local.graph)
            self._cache.clear()
            self._parts.clear()
            self.plans = PlanCache()
        gc.collect()  # device arrays held in reference cycles go back to the pool before the pool is emptied
        release_device_memory(self.backend)

    def _cached(self, key: tuple, build: Any) -> Any:
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build()
            return self._cache[key]

    @property
    def store(self) -> Any:
        from distsm.partition import PartitionStore

        return self._cached(("store",), lambda: PartitionStore.open(self.store_dir))

    @property
    def shares(self) -> Shares:
        return out_of_core_shares(self.budget, int(self.store.assignment.shape[0]))

    def load(self, part: int) -> Any:
        """Part ``part`` with its index resident on this worker's device (loaded on first use; out of core it may
        be released again to make room for another part)."""
        self.whole_graph()  # decides the mode
        if self.mode == "device":
            def build() -> Any:
                local = self.store.part(part)
                # builds and caches the device index on the local graph
                nbytes = int(self.backend.index(local.graph).nbytes)
                self.peak_part_bytes += nbytes
                logger.debug("worker %s loaded part %d (%d bytes of index)", self.worker, part, nbytes)
                return local

            return self._cached(("part", part), build)
        with self._lock:
            if part in self._parts:
                self._parts.move_to_end(part)
                return self._parts[part][0]
            local = self.store.part(part)
            nbytes = int(self.backend.index(local.graph).nbytes)
            self.part_bytes_h2d += nbytes
            # A join that still runs on an evicted part keeps its index alive until it ends.
            while self._parts and sum(b for _, b in self._parts.values()) + nbytes > self.shares.part:
                evicted, (old, _) = self._parts.popitem(last=False)
                self.backend.release(old.graph)
                logger.debug("worker %s released part %d to make room", self.worker, evicted)
            self._parts[part] = (local, nbytes)
            logger.debug("worker %s loaded part %d out of core (%d bytes of index)", self.worker, part, nbytes)
            self.peak_part_bytes = max(self.peak_part_bytes, sum(b for _, b in self._parts.values()))
            return local

    def job_budget(self, budget: int | None) -> BudgetPlan:
        """The budget of one job: the caller's (default: each side's own, :func:`~distsm.kernels.budget.
        default_budget`), on the device out of core at most the join's share of the device budget."""
        self.whole_graph()
        device = default_budget(self.backend, budget)
        if self.mode != "device":
            device = min(device, self.shares.join)
        return BudgetPlan(device, default_budget(self.backend.host(), budget))

    # ------------------------------------------------------------------ Site
    @contextmanager
    def part(self, i: int) -> Iterator[Any]:
        yield self.load(i)

    def host_index(self) -> DataIndex | None:
        return self._mapped_index() if self.backend.on_device else None

    def _mapped_index(self) -> DataIndex:
        """The whole graph's index over the store's memory-mapped files (NumPy arrays)."""
        return self._cached(("host-index",), lambda: self.store.adjacency_index(mmap=True))

    def slices(self, query: Graph, sem: Semantics, pieces: int) -> list[Slice]:
        """About ``pieces`` slices of ``query``'s global join, cut here as the client cuts the queries it slices
        (:func:`~distsm.plan.slices.global_slices`, on the host over the memory-mapped index)."""
        numpy = get_backend("numpy")
        host = self._mapped_index()
        return global_slices(numpy, host, query, sem, numpy.candidates(host, query, homomorphism=sem.homomorphism),
                             pieces)

    def whole_graph(self) -> tuple[DataIndex, Any, HostAdjacency | None]:
        def build() -> tuple[DataIndex, Any, HostAdjacency | None]:
            host = self._mapped_index()
            self.mode = resolve_adjacency(self.adjacency, self.budget, int(host.nbytes), host.n)
            logger.info("worker %s reads the whole graph's adjacency in mode %r (index %d bytes, device budget %d)",
                        self.worker, self.mode, int(host.nbytes), self.budget)
            assignment = self.backend.xp.asarray(np.asarray(self.store.assignment))
            if self.mode == "gather":
                shares = self.shares
                gathered = HostAdjacency(self.backend, host, limit=shares.piece, cache=shares.cache)
                return gathered.core, assignment, gathered
            if self.mode == "host":
                return self.backend.host_resident(host, share=True), assignment, None
            # On the CPU every process on the host shares the memory map.
            return self.backend.from_host(host), assignment, None

        return self._cached(("adjacency",), build)

    def cross_vertices(self) -> np.ndarray:
        return self._cached(("cross",), self.store.cross_vertices)

    def moved_bytes(self) -> int:
        gathered = self.whole_graph()[2]
        return self.part_bytes_h2d + (0 if gathered is None else gathered.stats.bytes_h2d)

    def device_bytes(self) -> int:
        index, _, gathered = self.whole_graph()
        return device_peak_bytes(self.backend, resident_bytes(self.mode, index), gathered, self.peak_part_bytes)


def _state(name: str) -> WorkerSite:
    plugins = get_worker().plugins
    if name not in plugins:
        raise RuntimeError(f"this worker has no distsm state {name!r}: the matcher was closed")
    return cast(WorkerSite, plugins[name])  # registered under this name by the matcher


def task_control() -> engine.Control:
    """Cancels the running task's join once Dask releases the task on this worker (``cancelled`` state, or
    forgotten): ``Batch.cancel()``, a batch timeout, ``client.cancel`` or the client going away all do."""
    worker = get_worker()
    key = worker.get_current_task()

    def cancelled() -> bool:
        ts = worker.state.tasks.get(key)
        return ts is None or ts.state == "cancelled"

    return engine.Control(cancelled=cancelled)


def load_part(name: str, part: int) -> dict[str, Any]:
    """Load one part onto this worker (task ``distsm-load-*``), and what every spanning search reads."""
    t = time.perf_counter()
    state = _state(name)
    local = state.load(part)
    idx = state.backend.index(local.graph)
    adjacency = state.whole_graph()[0]
    state.cross_vertices()
    return {"part": part, "worker": state.worker, "vertices": local.graph.n, "edges": local.graph.m,
            "bytes": int(idx.nbytes), "adjacency": state.mode, "device_budget": state.budget,
            "adjacency_bytes": resident_bytes(state.mode, adjacency),
            "shared_host_bytes": int(getattr(state.backend, "shared_host_bytes", 0)),
            "heap_temporaries": state.heap_temporaries,
            "seconds": time.perf_counter() - t}


def job(name: str, work: Job, query: Graph, sem: Semantics, budget: int | None, listing: bool = False,
        limit: int | None = None) -> Piece:
    """One job of a query (tasks ``distsm-intra-*`` and ``distsm-inter-*``, the slices of a heavy whole query
    included, and inside ``distsm-whole-*``); stops when the task is released."""
    state = _state(name)
    return run_job(state, work, query, sem, state.job_budget(budget), listing=listing, limit=limit,
                   control=task_control())


@dataclass(frozen=True)
class QueryTask:
    """One query of a batch as its tasks see it: its name, graph and semantics, the plan the client made, the
    number of parts, the batch, the client's planning seconds, listing or counting (at most ``limit`` rows), and
    ``distribution``: ``(how, why)`` the client spread it (see :meth:`distsm.Matcher.distribution`)."""

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


def combine(query: QueryTask, *pieces: Piece) -> QueryResult:
    """Merge one query's pieces (task ``distsm-merge-*``) and report the query to the scheduler."""
    result = merge(query.name, query.graph.n, query.sem, query.plan, query.k, list(pieces), listing=query.listing,
                   limit=query.limit, plan_seconds=query.plan_seconds)
    result.distribution, result.distribution_reason = query.distribution
    get_worker().log_event("distsm", {"batch": query.batch, "query": query.name, "status": "ok",
                                      "count": result.count, "gathered_bytes": result.gathered_bytes})
    return result


#: Dask priority of the slices a worker splits a heavy whole query into: above every query of a batch (whose
#: priorities count up from 0), so the query that is holding its worker's slot finishes first.
SPLIT_PRIORITY = 1 << 30


def whole(name: str, query: QueryTask, budget: int | None, split: int | None = None) -> QueryResult:
    """A query sent whole to this worker (task ``distsm-whole-*``): its one job and its merge in one task, so a
    small query costs the scheduler one task.

    With ``split`` (a count on the engine's counting paths), a query that passes its trial joins and whose
    counting plan (from sampled walks over its candidate edges) is estimated at ``distsm.cluster.split-work`` or
    more is heavy: rather than count it alone, this task cuts it into about ``split`` slices of its global join,
    submits them to the cluster (tasks ``distsm-inter-*``, any worker, this one included while the task waits
    seceded) and merges their counts.  Heaviness is measured on the worker, not guessed by the client, whose
    static estimates cannot tell a query that takes a millisecond from one that takes a minute."""
    [work] = whole_query_jobs()
    state = _state(name)
    control = task_control()
    split_work = cluster_options().split_work if split is not None and not query.listing else None
    piece = run_job(state, work, query.graph, query.sem, state.job_budget(budget), listing=query.listing,
                    limit=query.limit, control=control, split_work=split_work)
    if not piece.heavy:
        return combine(query, piece)
    assert split is not None  # only a split_work finds a query heavy
    # The work that found the query heavy (trials, refinement, planning) counts as a piece of no matches.
    slices = state.slices(query.graph, query.sem, split)
    logger.info("worker %s splits query %s into %d slices: %s", state.worker, query.name, len(slices), piece.heavy)
    pieces = _run_slices(name, query.graph, query.sem, budget, slices, control)
    why = (f"sent whole ({query.distribution[1]}), then split into {len(slices)} slices by worker "
           f"{state.worker}: {piece.heavy}")
    plan = replace(query.plan, reason=f"{query.plan.reason}; split into slices: {piece.heavy}")
    return combine(replace(query, plan=plan, distribution=("sliced", why)), piece, *pieces)


def _run_slices(name: str, query: Graph, sem: Semantics, budget: int | None, slices: list[Slice],
                control: engine.Control) -> list[Piece]:
    """Run ``slices`` of ``query``'s global join as tasks on the cluster and wait for their pieces, seceded from
    this worker's thread pool; cancelling this task (``control``) cancels them."""
    from distributed import wait, worker_client

    with worker_client() as client:
        futures = [client.submit(job, name, Job("inter", start=start, second=second, heavy=True), query, sem, budget,
                                 key=f"distsm-inter-{uuid.uuid4().hex}", pure=False, priority=SPLIT_PRIORITY)
                   for start, second in slices]
        try:
            pending = set(futures)
            while pending:
                try:
                    done, pending = wait(pending, timeout=0.2, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    control.check()
                    continue
                if any(f.status != "finished" for f in done):
                    break  # gather raises its error
            return client.gather(futures)
        finally:
            client.cancel([f for f in futures if not f.done()])
