"""Partitioned matching in one process: the in-process executor of :mod:`distsm.plan.execute`.

:class:`PartitionedMatcher` partitions the data graph once and runs every query's jobs (intra-partition joins and
spanning searches, :mod:`distsm.plan.search`) one after another in this process, as the Dask layer
(:class:`distsm.Matcher`) runs the same jobs on workers; both decide how a query spreads by
:mod:`distsm.plan.distribution` (this process is one site), keep their device state in a
:class:`~distsm.residency.Residency` and merge the jobs into the same :class:`~distsm.plan.results.QueryResult`.
Intra plus inter is the unpartitioned answer for every partition count, query and option.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import engine
from distsm.kernels.backend import Backend
from distsm.partition.spec import Partitioning
from distsm.plan.distribution import DEFAULT_DIRECTIONS, Decision, Directions, Sites, decide, shaped, whole_plan
from distsm.plan.execute import Job, job_rows, jobs, run_job, run_whole_jobs, whole_query_jobs
from distsm.plan.results import QueryResult, merge
from distsm.plan.site import PlanCache
from distsm.plan.inter import InterPartitionPlan
from distsm.plan.search import cross_fraction, plan_inter
from distsm.residency import Residency, ResidentSite, partitions_for_budget
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork

logger = logging.getLogger(__name__)


class PartitionedMatcher(ResidentSite):
    """Partitioned search over one data graph in this process (the reference for the Dask layer).

    Args:
        data: the data graph.
        partitions: the number of parts ``k``, or a :class:`~distsm.Partitioning` (parts, partitioner and seed,
            where the store is kept on disk, and where spanning searches read the whole graph's adjacency).
            ``"auto"`` parts are chosen from ``budget`` (:func:`~distsm.residency.partitions_for_budget`).
        backend: an engine backend (``distsm.kernels.get_backend(...)``).
        budget: the device bytes this process may hold (None: each count's own budget).

    Where spanning searches read the adjacency (:class:`~distsm.residency.Residency`): ``"device"`` keeps the whole
    graph's index resident on the backend's device.  The other two are out of core: only O(|V|) arrays of the
    whole graph live on the device and parts are loaded onto it for their intra-partition search, kept while they
    fit their share of the budget.  ``"host"`` keeps the adjacency in page-locked host memory that the GPU join
    reads in place (zero copy; :meth:`~distsm.kernels.cupy.CupyBackend.host_resident`); ``"gather"`` copies, per
    table chunk, the adjacency lists the chunk reads (PBE's LOADSUBGRAPHTOGPU;
    :class:`~distsm.kernels.gather.HostAdjacency`).  On the CPU backend both read host memory.  ``"auto"``
    chooses by the budget.
    """

    def __init__(self, data: Graph, partitions: int | str | Partitioning, *, backend: Backend,
                 budget: int | None = None):
        from distsm.partition import load_or_build

        how = partitions if isinstance(partitions, Partitioning) else Partitioning(partitions)
        t = time.perf_counter()
        backend.reset_peak()  # the site's peak device bytes count from here (its store, loads and joins)
        self.data = data
        self.backend = backend
        self.partitioning = how

        def build(k: int) -> Any:
            return load_or_build(data, k, directory=how.directory, method=how.method, seed=how.seed)

        if how.parts == "auto":
            if budget is None:
                raise ValueError("partitions='auto' chooses the parts from the device budget: give a budget")
            self.store = partitions_for_budget(data, budget, how.adjacency, build)
        else:
            self.store = build(int(how.parts))
        self.residency = Residency(backend, self.store, how.adjacency, budget, data=data)
        self.assignment = np.asarray(self.store.assignment)
        src, dst, _ = self.store.cross_edges()
        self.cross_edge_count = int(np.asarray(src).shape[0])
        self._cross = self.store.cross_vertices()
        self.worker = "local"
        self.plans = PlanCache()
        self.setup_seconds = time.perf_counter() - t
        logger.info("partitioned %d vertices into %d parts (%s), %d cross edges, in %.3f s", data.n, self.k,
                    how.method, self.cross_edge_count, self.setup_seconds)

    @property
    def k(self) -> int:
        return int(self.store.k)

    @property
    def mode(self) -> str:
        """The adjacency mode (``"auto"`` resolved once the whole graph is first read)."""
        self.residency.whole_graph()
        return self.residency.mode

    @property
    def host(self) -> Any:
        """The gathered adjacency (:class:`~distsm.kernels.gather.HostAdjacency`) in mode ``"gather"``, else None."""
        return self.residency.whole_graph()[2]

    @property
    def sites(self) -> Sites:
        return Sites(1, gather=self.mode == "gather")

    def plan(self, query: Graph, sem: Semantics, directions: Directions = DEFAULT_DIRECTIONS) -> InterPartitionPlan:
        """The inter-partition plan (the directions' ``strategy`` overrides the cost model's choice and their
        ``share=False`` turns shared execution off)."""
        engine.check_pair(self.data, query)
        return plan_inter(self.backend, self.residency.whole_graph()[0], query, sem,
                          cross_fraction(self.cross_edge_count, self.data.m), directions.share, directions.strategy)

    def _planned(self, query: Graph, sem: Semantics, directions: Directions) -> tuple[InterPartitionPlan, Decision]:
        """The plan a query runs and how it spreads (:func:`~distsm.plan.distribution.decide`, one site)."""
        decision = decide(query, sem, directions, self.sites)
        assert decision is not None  # one site needs no estimate
        if decision.measured:
            engine.check_pair(self.data, query)
            return whole_plan(), decision
        return shaped(self.plan(query, sem, directions), decision), decision

    def _jobs(self, plan: InterPartitionPlan, decision: Decision) -> list[Job]:
        return jobs(plan, self.k, self.cross_edge_count) if decision.how == "sliced" else whole_query_jobs()

    # ------------------------------------------------------------------ the Site of distsm.plan.execute
    def cross_vertices(self) -> np.ndarray:
        return self._cross

    def release(self) -> None:
        """Release the parts held on the device (they are loaded again when next searched)."""
        self.residency.release()

    # ------------------------------------------------------------------ queries
    def count(self, query: Graph, sem: Semantics, budget: int, directions: Directions = DEFAULT_DIRECTIONS, *,
              control: engine.Control | None = None) -> QueryResult:
        """Count intra-partition and spanning matches (see :class:`~distsm.plan.results.QueryResult`)."""
        return self.count_batch([query], sem, budget, directions, control=control)[0]

    def count_batch(self, queries: list[Graph], sem: Semantics, budget: int,
                    directions: Directions = DEFAULT_DIRECTIONS, *, names: list[str] | None = None,
                    control: engine.Control | None = None) -> list[QueryResult]:
        """:meth:`count` for several queries, part-major (see :meth:`iter_batch`), in query order."""
        return list(self.iter_batch(queries, sem, budget, directions, names=names, control=control))

    def iter_batch(self, queries: list[Graph], sem: Semantics, budget: int,
                   directions: Directions = DEFAULT_DIRECTIONS, *, names: list[str] | None = None,
                   control: engine.Control | None = None) -> Iterator[QueryResult]:
        """Count several queries, yielding each query's result (in query order) as it completes.

        Each query spreads as :mod:`distsm.plan.distribution` decides for one site, as on a cluster: a count goes
        whole (one join over the whole graph by the engine's counting paths), and the whole queries are counted
        first, as one batch (:func:`~distsm.plan.execute.run_whole_jobs`: the light ones joined together, then
        each of the others alone); a sliced query runs its plan's
        jobs, part-major: each part is made resident once and every sliced query's intra-partition join runs on
        it before the next part (out of core this loads each part once per batch, as PBE processes a partition
        for all its work); then each query's spanning searches run and its result is yielded.  ``bytes_h2d`` of a
        result counts the part loads its intra joins triggered (the first query needing a part pays for it) and
        the adjacency its spanning searches gathered.  ``names`` name the results (default ``query0``,
        ``query1``, ...); ``control`` cancels the batch between chunks (:class:`~distsm.kernels.engine.JoinCancelled`).
        """
        names = list(names) if names is not None else [f"query{i}" for i in range(len(queries))]
        if len(names) != len(queries):
            raise ValueError("names must have one entry per query")
        budget = self.residency.join_budget(budget, budget)
        planned, plan_seconds = [], []
        for q in queries:
            t = time.perf_counter()
            planned.append(self._planned(q, sem, directions))
            plan_seconds.append(time.perf_counter() - t)
        work = [self._jobs(plan, decision) for plan, decision in planned]
        done: list[list[Any]] = [[] for _ in queries]
        whole = [j for j, (_, decision) in enumerate(planned) if decision.how != "sliced"]
        for j, counted in zip(whole, run_whole_jobs(self, [queries[j] for j in whole], sem, budget,
                                                   control=control)):
            done[j].append(counted)
            work[j] = []
        for i in range(self.k):
            for j, q in enumerate(queries):
                done[j].extend(run_job(self, job, QueryWork(q, sem, budget, control))
                                 for job in work[j] if job.stage == "intra" and job.part == i)
        for j, q in enumerate(queries):
            done[j].extend(run_job(self, job, QueryWork(q, sem, budget, control))
                             for job in work[j] if job.stage == "inter")
            plan, decision = planned[j]
            result = merge(names[j], sem, plan, self.k, done[j], plan_seconds=plan_seconds[j])
            result.distribution, result.distribution_reason = decision.how, decision.why
            yield result

    def iter_matches(self, query: Graph, sem: Semantics, budget: int, limit: int | None = None,
                     directions: Directions = DEFAULT_DIRECTIONS, *,
                     control: engine.Control | None = None) -> Iterator[np.ndarray]:
        """Stream global-id rows, job by job (a whole query's, or each part's matches and then the spanning
        ones)."""
        plan, decision = self._planned(query, sem, Directions(directions.strategy, directions.distribute,
                                                              listing=True, share=directions.share))
        budget = self.residency.join_budget(budget, budget)
        streams = (job_rows(self, job, QueryWork(query, sem, budget, control), limit=limit)
                   for job in self._jobs(plan, decision))
        yield from engine.take((rows for stream in streams for rows in stream), limit)
