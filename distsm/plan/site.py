"""What a job's site keeps between jobs: the :class:`Site` protocol both executors implement (this process, or one
Dask worker), and its :class:`PlanCache` of candidate filters, planned searches and shared counts."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from distsm.graph import Graph, graph_fingerprint
from distsm.kernels.backend import Backend
from distsm.kernels.counting import Count, PlannedCount
from distsm.kernels.index import DataIndex
from distsm.plan.inter import EdgeGroup
from distsm.plan.results import AdjacencyChoice
from distsm.plan.search import SpanningSearch, prepare_search
from distsm.plan.split import SharedPlan
from distsm.semantics import Semantics


class Site(Protocol):
    """Where jobs run: this process (:class:`~distsm.partitioned.PartitionedMatcher`) or one Dask worker
    (:class:`~distsm.cluster.worker_site.WorkerSite`)."""

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

    def adjacency_choice(self) -> AdjacencyChoice:
        """Where the site reads the whole graph's adjacency, and why."""


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
               spanning_only: bool) -> SpanningSearch:
        """The spanning search of ``group`` (None: the global join) filtered and planned on ``index``."""

        def build() -> SpanningSearch:
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
