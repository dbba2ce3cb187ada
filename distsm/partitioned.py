"""Partitioned matching in one process: intra-partition joins plus inter-partition (spanning) searches.

The work splits into independent tasks, which the Dask layer (``distsm.cluster``) ships to workers unchanged:

* :func:`intra_task` — the engine on one part's induced subgraph.  Every match wholly inside the part is found
  there, and only those (local ids are sorted like global ids, so symmetry-breaking comparisons carry over).
* :func:`inter_task` — one spanning search over the whole graph's adjacency (in memory or memory-mapped): the
  representative sequence of an edge group (PBE), or one global join restricted to spanning matches; its level-0
  vertices may be a slice of the cross-edge endpoints so that the work spreads over workers.

Intra plus inter is the unpartitioned answer for every partition count, query and option.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from distsm.api import Semantics
from distsm.graph import Graph
from distsm.kernels import engine
from distsm.kernels.array_backend import Spanning
from distsm.kernels.gather import HostAdjacency
from distsm.kernels.index import DataIndex, estimate_core_bytes, estimate_index_bytes
from distsm.plan.automorphism import stabilizer_chain
from distsm.plan.inter import EdgeGroup, InterPartitionPlan, inter_partition_plan


@dataclass
class PartitionedResult:
    """Count (or number of listed rows) of a partitioned search, with its breakdown and timings."""

    count: int
    intra: list[int]
    inter: int
    plan: InterPartitionPlan | None
    semantics: Semantics
    seconds: dict[str, float] = field(default_factory=dict)
    inter_partial_matches: int = 0     # partial matches the spanning searches produced (their work)
    bytes_h2d: int = 0                 # out of core: part indexes and gathered adjacency copied to the device
    #                                    (zero-copy reads of host memory are not counted)


def _less_than(query: Graph, sem: Semantics) -> tuple[tuple[int, int], ...]:
    return stabilizer_chain(query).symmetry_breaking() if sem.unique else ()


def plan_inter(backend: Any, index: DataIndex, query: Graph, sem: Semantics, cross_edges: int, total_edges: int,
               share: bool = True) -> InterPartitionPlan:
    """The inter-partition plan of ``query`` with the data graph's statistics (cost model inputs)."""
    cands = backend.candidates(index, query, homomorphism=sem.homomorphism)
    sizes = [int(c.shape[0]) for c in cands]
    frac = cross_edges / total_edges if total_edges else 0.0
    return inter_partition_plan(query, candidate_sizes=sizes, label_entries=index.label_entries, n_data=index.n,
                                cross_fraction=frac, homomorphism=sem.homomorphism, unique=sem.unique, share=share)


def intra_task(backend: Any, local: Any, query: Graph, sem: Semantics, budget: int, *, count_only: bool,
               limit: int | None = None) -> Any:
    """Matches wholly inside one part: an int, or an iterator of global-id rows."""
    less = _less_than(query, sem)
    if count_only:
        return engine.count(backend, local.graph, query, sem.match_options, budget=budget, less_than=less)
    rows = engine.iter_matches(backend, local.graph, query, sem.match_options, budget=budget, limit=limit,
                               less_than=less)
    return (np.asarray(local.global_ids)[r] for r in rows)


def inter_task(backend: Any, index: DataIndex, assignment: Any, query: Graph, sem: Semantics, budget: int, *,
               group: EdgeGroup | None, start_vertices: np.ndarray | None, count_only: bool,
               limit: int | None = None, stats: dict[str, int] | None = None,
               candidates: list[Any] | None = None, spanning_only: bool = True, adjacency: Any = None) -> Any:
    """One spanning search: an edge group's representative (``group``) or, with ``group=None``, the global join
    restricted to spanning matches.

    ``start_vertices`` (None: no limit) restricts the images of one query vertex (the prime edge's first
    endpoint, or vertex 0 for the global join); disjoint slices split the search into disjoint pieces, which is
    how the work spreads over workers.

    Returns the number of matches the search stands for (the representative's count times the group size when
    results are shared), or an iterator of rows (REMAPped to every member of the group).  ``candidates`` (the
    backend's candidate filter on ``index``) saves filtering again for every group of one query.
    ``spanning_only=False`` (global join only) keeps every match: the whole answer in one join, for plans that
    skip the intra-partition searches.  ``adjacency`` (a :class:`~distsm.kernels.gather.HostAdjacency` whose
    core is ``index``) gathers adjacency from host memory level by level instead of reading a resident index.
    """
    less = _less_than(query, sem)
    part = backend.xp.asarray(assignment)
    if group is not None:
        anchor = group.representative.edge[0]
    elif start_vertices is None:
        anchor = 0
    else:
        # Slice the vertex the join starts from: restricting any other vertex would leave every slice the whole
        # join up to that vertex's level, and the slices would repeat each other's work.
        if candidates is None:
            candidates = backend.candidates(index, query, homomorphism=sem.homomorphism)
        anchor = engine.start_vertex(index, query, sem.match_options, candidates, less, spanning_only)
    restrict = None if start_vertices is None else {anchor: start_vertices}
    prime = None if group is None else group.representative.prime_edge
    prepared = engine.prepare(backend, index, query, sem.match_options, less_than=less, restrict=restrict,
                              prime_edge=prime, spanning_only=group is None and spanning_only, candidates=candidates)
    if prepared is None:
        return 0 if count_only else iter(())
    spanning = Spanning(part, prepared.plan.prime) if prepared.plan.needs_partition else None
    if count_only:
        found = sum(int(c) for c in engine.walk(backend, prepared, budget, True, spanning, stats, adjacency))
        return found * (len(group.sequences) if group is not None else 1)
    return _remapped_rows(backend, prepared, budget, spanning, group, limit, adjacency)


def _remapped_rows(backend: Any, prepared: Any, budget: int, spanning: Any, group: EdgeGroup | None,
                   limit: int | None, adjacency: Any) -> Iterator[np.ndarray]:
    inv = prepared.plan.inverse_order
    # f has the representative's prime edge; f∘t⁻¹ has member t's: row[u] = f[t⁻¹(u)].
    remaps = [np.argsort(np.asarray(seq.remap)) for seq in group.sequences] if group is not None else []

    def chunks() -> Iterator[np.ndarray]:
        for table in engine.walk(backend, prepared, budget, False, spanning, adjacency=adjacency):
            rows = backend.to_host(table)[:, inv].astype(np.int64)
            if len(remaps) > 1:
                yield from (rows[:, t_inv] for t_inv in remaps)
            else:
                yield rows

    return engine.take(chunks(), limit)


#: Where inter-partition search reads the whole graph's adjacency (see :class:`PartitionedMatcher`).
ADJACENCY_MODES = ("device", "host", "gather")


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
            place (zero copy; :meth:`~distsm.kernels.cupy_backend.CupyBackend.host_resident`); ``"gather"``
            copies, per table chunk, the adjacency lists the chunk reads (PBE's LOADSUBGRAPHTOGPU;
            :class:`~distsm.kernels.gather.HostAdjacency`).  On the CPU backend both read host memory.
    """

    def __init__(self, data: Graph, partitions: int, *, method: str = "metis", seed: int = 0,
                 directory: str | None = None, backend: Any, adjacency: str = "device"):
        from distsm.partition import load_or_build

        if adjacency not in ADJACENCY_MODES:
            raise ValueError(f"adjacency must be one of {', '.join(map(repr, ADJACENCY_MODES))}, got {adjacency!r}")
        t = time.perf_counter()
        self.data = data
        self.backend = backend
        self.adjacency = adjacency
        self.store = load_or_build(data, partitions, directory=directory, method=method, seed=seed)
        self.assignment = np.asarray(self.store.assignment)
        src, dst, _ = self.store.cross_edges()
        self.cross_edge_count = int(np.asarray(src).shape[0])
        self.cross_vertices = self.store.cross_vertices()
        self.host: HostAdjacency | None = None
        self.part_bytes_h2d = 0   # out of core: bytes of part indexes loaded onto the device so far
        if adjacency == "gather":
            self.host = HostAdjacency(backend, self.store.adjacency_index(mmap=True), limit=1)
            self.index = self.host.core
        elif adjacency == "host":
            self.index = backend.host_resident(self.store.adjacency_index(mmap=True))
        elif backend.name == "numpy" and not self.store.in_memory:
            # A store on disk serves the whole graph's adjacency memory-mapped, shared by every process on the host.
            self.index = self.store.adjacency_index(mmap=True)
        else:
            self.index = backend.index(data)
        self.setup_seconds = time.perf_counter() - t

    @classmethod
    def for_budget(cls, data: Graph, budget: int, *, backend: Any, method: str = "metis", seed: int = 0,
                   directory: str | None = None, adjacency: str = "host", max_tries: int = 6) -> PartitionedMatcher:
        """An out-of-core (``adjacency="host"`` or ``"gather"``) matcher whose ``k`` is chosen from the device
        ``budget``.  The whole graph's O(|V|) arrays (labels, degrees, signatures, the part of every vertex; see
        :func:`~distsm.kernels.index.estimate_core_bytes`) stay on the device and come off the budget first; every
        part's index must fit in three eighths of the rest (half is the join's, an eighth the cached high-degree
        rows; see :meth:`_budgets`).  ``k`` starts at the whole graph's index size over that share and grows while
        the partitioner leaves a part too large.  A budget that cannot hold the O(|V|) arrays is refused."""
        core = estimate_core_bytes(data.n)
        if budget <= core:
            raise ValueError(f"a device budget of {budget} bytes cannot hold the data graph's per-vertex arrays "
                             f"({core} bytes for {data.n} vertices) that out-of-core search keeps on the device; "
                             f"raise it above {core} bytes")
        half = max((budget - core) * 3 // 8, 1)
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

    def plan(self, query: Graph, sem: Semantics, strategy: str | None = None, share: bool = True
             ) -> InterPartitionPlan:
        """The inter-partition plan; ``strategy`` (``"pbe"`` or ``"global"``) overrides the cost model's choice
        and ``share=False`` turns shared execution off."""
        engine.check_pair(self.data, query)
        plan = plan_inter(self.backend, self.index, query, sem, self.cross_edge_count, self.data.m, share)
        if strategy is not None and strategy != plan.strategy:
            if strategy not in ("pbe", "global"):
                raise ValueError(f"strategy must be 'pbe' or 'global', got {strategy!r}")
            plan = replace(plan, strategy=strategy, reason=f"forced by the caller (cost model chose {plan.strategy})")
        return plan

    def _budgets(self, budget: int) -> int:
        """The join's budget.  Out of core the whole graph's O(|V|) arrays come off ``budget`` first, and the
        join gets half of the rest; an eighth more holds the cached high-degree rows, and either the part being
        searched (at most three eighths, see :meth:`for_budget`) or a gathered piece (a quarter) is resident with
        them."""
        if self.adjacency == "device":
            return budget
        rest = max(budget - estimate_core_bytes(self.data.n), 8)
        if self.host is not None and self.host.limit != max(rest // 4, 1):
            self.host.limit = max(rest // 4, 1)
            self.host.set_cache(rest // 8)
        return max(rest // 2, 1)

    @contextmanager
    def _resident(self, i: int) -> Iterator[Any]:
        """Part ``i`` for its intra-partition search; out of core its device index is built on entry and released
        on exit (gathering, its bytes count as moved host to device), so one part is resident at a time."""
        local = self.store.part(i)
        if self.adjacency == "device":
            yield local
            return
        self.part_bytes_h2d += int(self.backend.index(local.graph).nbytes)
        try:
            yield local
        finally:
            self.backend.release(local.graph)

    def count(self, query: Graph, sem: Semantics, budget: int, strategy: str | None = None,
              share: bool = True) -> PartitionedResult:
        """Count intra-partition and spanning matches; see :class:`PartitionedResult`."""
        return self.count_batch([query], sem, budget, strategy, share)[0]

    def count_batch(self, queries: list[Graph], sem: Semantics, budget: int, strategy: str | None = None,
                    share: bool = True) -> list[PartitionedResult]:
        """:meth:`count` for several queries, part-major: each part is made resident once and every query's
        intra-partition search runs on it before the next part (out of core this loads each part once per batch,
        as PBE processes a partition for all its work).  ``bytes_h2d`` of the first result carries the part
        loads; each result adds its own gathered adjacency."""
        budget = self._budgets(budget)
        nq = len(queries)
        times: list[dict[str, float]] = [{} for _ in range(nq)]
        plans = []
        for q, tm in zip(queries, times):
            t = time.perf_counter()
            plans.append(self.plan(q, sem, strategy, share))
            tm["plan"] = time.perf_counter() - t
            tm["intra"] = 0.0
        intra = [[0] * self.k for _ in range(nq)]
        parts0 = self.part_bytes_h2d
        for i in range(self.k):
            with self._resident(i) as local:
                for j, q in enumerate(queries):
                    t = time.perf_counter()
                    intra[j][i] = intra_task(self.backend, local, q, sem, budget, count_only=True)
                    times[j]["intra"] += time.perf_counter() - t
        results = []
        for j, q in enumerate(queries):
            gathered0 = self.host.stats.bytes_h2d if self.host is not None else 0
            t = time.perf_counter()
            work: dict[str, int] = {}
            cands = self.backend.candidates(self.index, q, homomorphism=sem.homomorphism)
            inter = sum(inter_task(self.backend, self.index, self.assignment, q, sem, budget, group=group,
                                   start_vertices=start, count_only=True, stats=work, candidates=cands,
                                   adjacency=self.host)
                        for group, start in self._inter_jobs(plans[j]))
            times[j]["inter"] = time.perf_counter() - t
            moved = (self.host.stats.bytes_h2d - gathered0) if self.host is not None else 0
            if j == 0:
                moved += self.part_bytes_h2d - parts0
            results.append(PartitionedResult(sum(intra[j]) + inter, intra[j], inter, plans[j], sem, times[j],
                                             work.get("partial", 0), moved))
        return results

    def _inter_jobs(self, plan: InterPartitionPlan) -> list[tuple[EdgeGroup | None, np.ndarray | None]]:
        if self.k == 1 or self.cross_edge_count == 0:
            return []
        if plan.strategy == "global":
            return [(None, None)]
        return [(g, self.cross_vertices) for g in plan.groups]

    def iter_matches(self, query: Graph, sem: Semantics, budget: int, limit: int | None = None,
                     strategy: str | None = None) -> Iterator[np.ndarray]:
        """Stream global-id rows: each part's matches, then the spanning ones."""
        plan = self.plan(query, sem, strategy)

        budget = self._budgets(budget)

        def part_rows(i: int) -> Iterator[np.ndarray]:
            with self._resident(i) as local:
                yield from intra_task(self.backend, local, query, sem, budget, count_only=False, limit=limit)

        def streams() -> Iterator[Iterator[np.ndarray]]:
            for i in range(self.k):
                yield part_rows(i)
            for group, start in self._inter_jobs(plan):
                yield inter_task(self.backend, self.index, self.assignment, query, sem, budget, group=group,
                                 start_vertices=start, count_only=False, limit=limit, adjacency=self.host)

        yield from engine.take((rows for stream in streams() for rows in stream), limit)
