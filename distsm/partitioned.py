"""Partitioned matching in one process: the in-process executor of :mod:`distsm.plan.execute`.

:class:`PartitionedMatcher` partitions the data graph once and runs every query's jobs (intra-partition joins and
spanning searches, :mod:`distsm.plan.search`) one after another in this process, as the Dask layer
(:class:`distsm.Matcher`) runs the same jobs on workers; both merge them into the same
:class:`~distsm.plan.execute.QueryResult`.  Intra plus inter is the unpartitioned answer for every partition count,
query and option.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels import engine
from distsm.kernels.backend import Backend
from distsm.kernels.gather import HostAdjacency
from distsm.kernels.index import DataIndex, estimate_core_bytes, estimate_index_bytes
from distsm.plan.execute import PlanCache, QueryResult, job_rows, jobs, merge, run_job
from distsm.plan.inter import InterPartitionPlan
from distsm.plan.search import plan_inter
from distsm.semantics import Semantics
from distsm.arguments import check_choice
from distsm.config import cluster_options
from distsm.vocabulary import WORKER_ADJACENCY_MODES, AdjacencyMode, PartitionMethod, Strategy, check_adjacency

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shares:
    """How an out-of-core site splits its device budget: the whole graph's O(|V|) arrays come off it first;
    of the rest the join gets half, the cached high-degree rows an eighth, and either the parts being searched
    (at most three eighths) or one gathered piece (a quarter) is resident with them."""

    join: int
    part: int
    piece: int
    cache: int


def out_of_core_shares(budget: int, n: int) -> Shares:
    """The :class:`Shares` of ``budget`` device bytes for a data graph of ``n`` vertices."""
    rest = max(budget - estimate_core_bytes(n), 8)
    return Shares(join=max(rest // 2, 1), part=max(rest * 3 // 8, 1), piece=max(rest // 4, 1), cache=rest // 8)


def default_device_budget(backend: Backend) -> int:
    """Device bytes a site may hold when the caller sets no budget: the ``distsm.cluster.device-budget`` option
    when set, else what the backend could give now (:meth:`~distsm.kernels.backend.Backend.available_bytes`)."""
    configured = cluster_options().device_budget
    return configured if configured is not None else backend.available_bytes()


def resolve_adjacency(adjacency: str, budget: int, index_bytes: int, n: int) -> str:
    """The adjacency mode a site with ``budget`` device bytes uses for a whole-graph index of ``index_bytes``:
    ``adjacency`` itself unless it is ``"auto"``, which keeps the index on the device when it fits in half the
    budget (the join needs the rest) and reads it from host memory (``"host"``) otherwise.  A budget that cannot
    hold the O(|V|) arrays out-of-core search keeps on the device is refused."""
    check_choice("adjacency", adjacency, WORKER_ADJACENCY_MODES)
    mode = adjacency if adjacency != "auto" else ("device" if index_bytes <= budget // 2 else "host")
    core = estimate_core_bytes(n)
    if mode != "device" and budget <= core:
        raise ValueError(f"a device budget of {budget} bytes cannot hold the data graph's per-vertex arrays "
                         f"({core} bytes for {n} vertices) that out-of-core search keeps on the device; "
                         f"raise it above {core} bytes")
    return mode


class PartitionedMatcher:
    """Partitioned search over one data graph in this process (the reference for the Dask layer).

    Args:
        data: the data graph.
        partitions: number of parts ``k``.
        method, seed: partitioner (``"metis"``, ``"random"``, ``"contiguous"``) and its seed.
        directory: where the partition store is cached on disk (None: in memory).
        backend: an engine backend (``distsm.kernels.get_backend(...)``).
        adjacency: where inter-partition search reads the whole graph's adjacency.  ``"device"`` keeps its index
            resident on the backend's device.  The other two are out of core: only O(|V|) arrays of the whole
            graph live on the device and parts are loaded onto it one at a time for their intra-partition search
            and released.  ``"host"`` keeps the adjacency in page-locked host memory that the GPU join reads in
            place (zero copy; :meth:`~distsm.kernels.cupy.CupyBackend.host_resident`); ``"gather"``
            copies, per table chunk, the adjacency lists the chunk reads (PBE's LOADSUBGRAPHTOGPU;
            :class:`~distsm.kernels.gather.HostAdjacency`).  On the CPU backend both read host memory.
    """

    def __init__(self, data: Graph, partitions: int, *, method: PartitionMethod = "metis", seed: int = 0,
                 directory: str | None = None, backend: Backend, adjacency: AdjacencyMode = "device"):
        from distsm.partition import load_or_build

        check_adjacency(adjacency)
        t = time.perf_counter()
        self.data = data
        self.backend = backend
        self.adjacency = adjacency
        self.store = load_or_build(data, partitions, directory=directory, method=method, seed=seed)
        self.assignment = np.asarray(self.store.assignment)
        src, dst, _ = self.store.cross_edges()
        self.cross_edge_count = int(np.asarray(src).shape[0])
        self._cross = self.store.cross_vertices()
        self._held: dict[int, Any] = {}   # parts kept resident for a batch (None until first used)
        self.worker = "local"
        self.plans = PlanCache()
        self.host: HostAdjacency | None = None
        self._host_index: DataIndex | None = None
        self.part_bytes_h2d = 0   # out of core: bytes of part indexes loaded onto the device so far
        if adjacency == "gather":
            self.host = HostAdjacency(backend, self.store.adjacency_index(mmap=True), limit=1)
            self.index = self.host.core
        elif adjacency == "host":
            self.index = backend.host_resident(self.store.adjacency_index(mmap=True))
        elif not backend.on_device and not self.store.in_memory:
            # A store on disk serves the whole graph's adjacency memory-mapped, shared by every process on the host.
            self.index = self.store.adjacency_index(mmap=True)
        else:
            self.index = backend.index(data)
        self.setup_seconds = time.perf_counter() - t
        logger.info("partitioned %d vertices into %d parts (%s), %d cross edges, adjacency %r, in %.3f s", data.n,
                    self.k, method, self.cross_edge_count, adjacency, self.setup_seconds)

    @classmethod
    def for_budget(cls, data: Graph, budget: int, *, backend: Backend, method: PartitionMethod = "metis", seed: int = 0,
                   directory: str | None = None, adjacency: AdjacencyMode = "host",
                   max_tries: int = 6) -> PartitionedMatcher:
        """An out-of-core (``adjacency="host"`` or ``"gather"``) matcher whose ``k`` is chosen from the device
        ``budget``.  The whole graph's O(|V|) arrays (labels, degrees, signatures, the part of every vertex; see
        :func:`~distsm.kernels.index.estimate_core_bytes`) stay on the device and come off the budget first; every
        part's index must fit in three eighths of the rest (half is the join's, an eighth the cached high-degree
        rows; see :meth:`_budgets`).  ``k`` starts at the whole graph's index size over that share and grows while
        the partitioner leaves a part too large.  A budget that cannot hold the O(|V|) arrays is refused."""
        resolve_adjacency(adjacency, budget, estimate_index_bytes(data.n, data.nnz, True), data.n)
        half = out_of_core_shares(budget, data.n).part
        labelled = data.num_effective_labels > 1
        k = max(1, -(-estimate_index_bytes(data.n, data.nnz, labelled) // half))
        for _ in range(max_tries):
            matcher = cls(data, k, method=method, seed=seed, directory=directory, backend=backend,
                          adjacency=adjacency)
            st = matcher.store.stats
            per_edge = 1 if data.directed else 2
            largest = max(estimate_index_bytes(v, per_edge * e, labelled)
                          for v, e in zip(st.part_vertices, st.part_edges))
            if largest <= half or k >= data.n:
                return matcher
            k = min(data.n, max(k + 1, -(-k * largest // half)))
        raise ValueError(f"no partition of {data.n} vertices into parts of at most {half} index bytes was found "
                         f"in {max_tries} tries (last k = {k}); raise the budget")

    @property
    def k(self) -> int:
        return int(self.store.k)

    def plan(self, query: Graph, sem: Semantics, strategy: Strategy | str | None = None, share: bool = True
             ) -> InterPartitionPlan:
        """The inter-partition plan; ``strategy`` (:class:`~distsm.vocabulary.Strategy` or its value) overrides the
        cost model's choice and ``share=False`` turns shared execution off."""
        engine.check_pair(self.data, query)
        return plan_inter(self.backend, self.index, query, sem, self.cross_edge_count, self.data.m, share, strategy)

    def _budgets(self, budget: int) -> int:
        """The join's budget.  Out of core the whole graph's O(|V|) arrays come off ``budget`` first, and the
        join gets half of the rest; an eighth more holds the cached high-degree rows, and either the part being
        searched (at most three eighths, see :meth:`for_budget`) or a gathered piece (a quarter) is resident with
        them."""
        if self.adjacency == "device":
            return budget
        shares = out_of_core_shares(budget, self.data.n)
        if self.host is not None and self.host.limit != shares.piece:
            self.host.limit = shares.piece
            self.host.set_cache(shares.cache)
        return shares.join

    # ------------------------------------------------------------------ the Site of distsm.plan.execute
    @contextmanager
    def part(self, i: int) -> Iterator[Any]:
        """Part ``i`` for its intra-partition search.  Out of core its device index is built on entry and released
        on exit (its bytes count as moved host to device), so one part is resident at a time, unless a
        :meth:`_keep` block holds it for several queries."""
        if self._held.get(i) is not None:
            yield self._held[i]
            return
        local = self.store.part(i)
        if self.adjacency == "device":
            yield local
            return
        self.part_bytes_h2d += int(self.backend.index(local.graph).nbytes)
        logger.debug("loaded part %d onto the device", i)
        if i in self._held:
            self._held[i] = local  # released when the _keep block ends
            yield local
            return
        try:
            yield local
        finally:
            self.backend.release(local.graph)

    @contextmanager
    def _keep(self, i: int) -> Iterator[None]:
        """Keep part ``i`` resident from its first use until the block ends (part-major batches)."""
        self._held[i] = None
        try:
            yield
        finally:
            local = self._held.pop(i)
            if local is not None and self.adjacency != "device":
                self.backend.release(local.graph)

    def whole_graph(self) -> tuple[DataIndex, Any, HostAdjacency | None]:
        return self.index, self.assignment, self.host

    def host_index(self) -> DataIndex | None:
        if not self.backend.on_device:
            return None
        if self._host_index is None:
            # Out of core the store's memory map serves (the graph's own host index would be a second copy).
            self._host_index = self.store.adjacency_index(mmap=True) if self.adjacency != "device" else \
                self.backend.host().index(self.data)
        return self._host_index

    def cross_vertices(self) -> np.ndarray:
        return self._cross

    def moved_bytes(self) -> int:
        return self.part_bytes_h2d + (self.host.stats.bytes_h2d if self.host is not None else 0)

    def device_bytes(self) -> int:
        return device_peak_bytes(self.backend, resident_bytes(self.adjacency, self.index), self.host)

    # ------------------------------------------------------------------ queries
    def count(self, query: Graph, sem: Semantics, budget: int, strategy: Strategy | str | None = None,
              share: bool = True, *, control: engine.Control | None = None) -> QueryResult:
        """Count intra-partition and spanning matches (see :class:`~distsm.plan.execute.QueryResult`)."""
        return self.count_batch([query], sem, budget, strategy, share, control=control)[0]

    def count_batch(self, queries: list[Graph], sem: Semantics, budget: int, strategy: Strategy | str | None = None,
                    share: bool = True, *, names: list[str] | None = None,
                    control: engine.Control | None = None) -> list[QueryResult]:
        """:meth:`count` for several queries, part-major (see :meth:`iter_batch`), in query order."""
        return list(self.iter_batch(queries, sem, budget, strategy, share, names=names, control=control))

    def iter_batch(self, queries: list[Graph], sem: Semantics, budget: int, strategy: Strategy | str | None = None,
                   share: bool = True, *, names: list[str] | None = None,
                   control: engine.Control | None = None) -> Iterator[QueryResult]:
        """Count several queries part-major, yielding each query's result (in query order) as it completes.

        Each part is made resident once and every query's intra-partition join runs on it before the next part
        (out of core this loads each part once per batch, as PBE processes a partition for all its work); then each
        query's spanning searches run and its result is yielded.  ``bytes_h2d`` of a result counts the part loads
        its intra joins triggered (the first query needing a part pays for it) and the adjacency its spanning
        searches gathered.  ``names`` name the results (default ``query0``, ``query1``, ...); ``control`` cancels
        the batch between chunks (:class:`~distsm.kernels.engine.JoinCancelled`).
        """
        names = list(names) if names is not None else [f"query{i}" for i in range(len(queries))]
        if len(names) != len(queries):
            raise ValueError("names must have one entry per query")
        budget = self._budgets(budget)
        plans, plan_seconds = [], []
        for q in queries:
            t = time.perf_counter()
            plans.append(self.plan(q, sem, strategy, share))
            plan_seconds.append(time.perf_counter() - t)
        work = [jobs(plan, self.k, self.cross_edge_count) for plan in plans]
        pieces: list[list[Any]] = [[] for _ in queries]
        for i in range(self.k):
            with self._keep(i):
                for j, q in enumerate(queries):
                    pieces[j].extend(run_job(self, job, q, sem, budget, control=control)
                                     for job in work[j] if job.stage == "intra" and job.part == i)
        for j, q in enumerate(queries):
            pieces[j].extend(run_job(self, job, q, sem, budget, control=control)
                             for job in work[j] if job.stage == "inter")
            yield merge(names[j], q.n, sem, plans[j], self.k, pieces[j], plan_seconds=plan_seconds[j])

    def iter_matches(self, query: Graph, sem: Semantics, budget: int, limit: int | None = None,
                     strategy: Strategy | str | None = None, *,
                     control: engine.Control | None = None) -> Iterator[np.ndarray]:
        """Stream global-id rows, job by job (each part's matches, then the spanning ones)."""
        plan = self.plan(query, sem, strategy)
        budget = self._budgets(budget)
        streams = (job_rows(self, job, query, sem, budget, limit=limit, control=control)
                   for job in jobs(plan, self.k, self.cross_edge_count))
        yield from engine.take((rows for stream in streams for rows in stream), limit)


def resident_bytes(mode: str, index: DataIndex) -> int:
    """Device bytes of the whole graph's index in adjacency ``mode``: all of it on the device, its O(|V|) arrays
    only out of core (the CPU backend's ``"host"`` index is the host index itself, so they are estimated)."""
    if mode == "host":
        return min(int(index.nbytes), estimate_core_bytes(index.n))
    return int(index.nbytes)


def device_peak_bytes(backend: Backend, resident: int, host: HostAdjacency | None, parts: int = 0) -> int:
    """Peak device bytes of a site as far as its backend knows them: on CuPy the memory pool's total (the pool
    keeps the blocks it ever held until it is emptied, so its total is its high-water mark); on the CPU the
    bytes a device would hold: the whole graph's ``resident`` bytes (:func:`resident_bytes`), the resident parts'
    indexes (``parts``), and the largest gathered piece with the cached high-degree rows."""
    if backend.name == "cupy":
        return int(backend.xp.get_default_memory_pool().total_bytes())
    gathered = 0 if host is None else host.stats.peak_piece_bytes + host.cache_bytes
    return resident + parts + gathered
