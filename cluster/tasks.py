"""What runs on Dask workers: a :class:`WorkerState` plugin per :class:`~distsm.Matcher`, and the task functions.

A matcher registers one :class:`WorkerState` under a name of its own; on every worker (including workers that
join later) it keeps what the matcher's tasks loaded: the partition store, each part's index on the worker's
device, the whole graph's adjacency and the candidate filters of the last few queries.  A part is loaded once per
worker and reused by every later query; :meth:`Matcher.close() <distsm.Matcher.close>` unregisters the plugin and
its teardown releases all of it, device memory included.

Tasks run :mod:`distsm.plan.execute` jobs with the plugin as their :class:`~distsm.plan.execute.Site`, so a worker
computes exactly what the in-process executor computes.  They are pure functions of their arguments and the store:
when a worker dies, the scheduler runs its tasks elsewhere and the answers do not change.  A running job stops
within one chunk once Dask releases its task (the batch was cancelled or timed out, or its client went away):
:func:`task_control` watches the task's state on the worker.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.index import DataIndex
from distsm.plan.execute import Job, Piece, QueryResult, merge, release_device_memory, run_job
from distsm.plan.inter import InterPartitionPlan
from distsm.semantics import Semantics

#: Candidate filters kept per worker: the slices of one query's spanning search that land on the same worker filter
#: once, not once per slice.
RECENT_QUERIES = 8


class WorkerState(WorkerPlugin):
    """One matcher's cache on one worker (a ``distributed`` worker plugin), and the :class:`~distsm.plan.execute.Site`
    its jobs run on.

    Args:
        name: the plugin's name (unique per matcher; tasks find their state by it).
        store_dir: the partition store's directory (every worker must be able to read it).
        backend_name: the engine backend (``"auto"``, ``"numpy"`` or ``"cupy"``).
    """

    def __init__(self, name: str, store_dir: str, backend_name: str):
        self.name = name
        self.store_dir = store_dir
        self.backend_name = backend_name

    def setup(self, worker: Any) -> None:
        self.worker = str(worker.name)
        self.backend = get_backend(self.backend_name)
        self._lock = threading.RLock()  # builders nest (a part needs the store)
        self._cache: dict[tuple, Any] = {}
        self._recent: OrderedDict[tuple, Any] = OrderedDict()

    def teardown(self, worker: Any) -> None:
        """Drop every part, index and filter this matcher loaded and give the device memory back."""
        with self._lock:
            for key, value in self._cache.items():
                if key[0] == "part":
                    self.backend.release(value.graph)
            self._cache.clear()
            self._recent.clear()
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

    def load(self, part: int) -> Any:
        """Part ``part`` with its index resident on this worker's device (loaded on first use)."""

        def build() -> Any:
            local = self.store.part(part)
            self.backend.index(local.graph)  # builds and caches the device index on the local graph
            return local

        return self._cached(("part", part), build)

    # ------------------------------------------------------------------ Site
    @contextmanager
    def part(self, i: int) -> Iterator[Any]:
        yield self.load(i)

    def whole_graph(self) -> tuple[DataIndex, Any, None]:
        def build() -> tuple[DataIndex, Any]:
            host = self.store.adjacency_index(mmap=True)
            # On the CPU every process on the host shares the memory map.
            return self.backend.from_host(host), self.backend.xp.asarray(np.asarray(self.store.assignment))

        index, assignment = self._cached(("adjacency",), build)
        return index, assignment, None

    def cross_vertices(self) -> np.ndarray:
        return self._cached(("cross",), self.store.cross_vertices)

    def candidates(self, query: Graph, homomorphism: bool) -> list[Any]:
        from distsm.partition.store import graph_fingerprint

        key = (graph_fingerprint(query), homomorphism)
        with self._lock:
            cands = self._recent.get(key)
            if cands is not None:
                self._recent.move_to_end(key)
                return cands
        cands = self.backend.candidates(self.whole_graph()[0], query, homomorphism=homomorphism)
        with self._lock:
            self._recent[key] = cands
            while len(self._recent) > RECENT_QUERIES:
                self._recent.popitem(last=False)
        return cands

    def moved_bytes(self) -> int:
        return 0  # everything a worker searches stays resident


def _state(name: str) -> WorkerState:
    plugins = get_worker().plugins
    if name not in plugins:
        raise RuntimeError(f"this worker has no distsm state {name!r}: the matcher was closed")
    return plugins[name]


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
            "bytes": int(idx.nbytes), "adjacency_bytes": int(adjacency.nbytes), "seconds": time.perf_counter() - t}


def job(name: str, work: Job, query: Graph, sem: Semantics, budget: int | None, listing: bool = False,
        limit: int | None = None) -> Piece:
    """One job of a query (tasks ``distsm-intra-*`` and ``distsm-inter-*``); stops when the task is released."""
    state = _state(name)
    return run_job(state, work, query, sem, budget or state.backend.default_budget(), listing=listing, limit=limit,
                   control=task_control())


def combine(query: str, query_graph: Graph, sem: Semantics, plan: InterPartitionPlan, k: int, batch: str,
            plan_seconds: float, listing: bool, limit: int | None, *pieces: Piece) -> QueryResult:
    """Merge one query's pieces (task ``distsm-merge-*``) and report the query to the scheduler."""
    result = merge(query, query_graph.n, sem, plan, k, list(pieces), listing=listing, limit=limit,
                   plan_seconds=plan_seconds)
    get_worker().log_event("distsm", {"batch": batch, "query": query, "status": "ok", "count": result.count,
                                      "gathered_bytes": result.gathered_bytes})
    return result
