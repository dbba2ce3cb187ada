"""One matcher's state on one Dask worker: the :class:`WorkerSite` plugin (its residency, plan cache and warm-up),
which is the :class:`~distsm.plan.site.Site` the worker's jobs run on, how a task finds it (:func:`state_of`), and
:func:`task_control`, which stops a running job once Dask releases its task."""

from __future__ import annotations

import gc
import threading
from typing import Any, cast

import numpy as np
from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from distsm.cluster.allocator import set_mmap_threshold
from distsm.config import cluster_options
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.kernels.budget import BudgetPlan, default_budget
from distsm.plan.execute import release_device_memory
from distsm.plan.site import PlanCache
from distsm.plan.slices import Slice, global_slices
from distsm.residency import Residency, ResidentSite, default_device_budget
from distsm.semantics import Semantics
from distsm.vocabulary import BackendName


class WorkerSite(ResidentSite, WorkerPlugin):
    """One matcher's cache on one worker (a ``distributed`` worker plugin), and the :class:`~distsm.plan.site.Site`
    its jobs run on.

    What the worker holds on its device is a :class:`~distsm.residency.Residency`, as in process: where spanning
    searches read the whole graph's adjacency is decided from the worker's device budget (on the device when the
    index fits, else out of core, where the device holds only the O(|V|) arrays and the adjacency stays in the
    partition store's memory-mapped files, which every worker of a host shares (one host-memory copy per node):
    read in place (``"host"``; on a GPU the mapped pages are page-locked and read over the bus) or gathered per
    table chunk (``"gather"``)).  Out of core, the parts this worker searches stay resident while they fit in their
    share of the budget and are reloaded otherwise (least recently used first out).  On setup it raises the worker
    process's mmap threshold (``distsm.cluster.mmap-threshold``, see :mod:`distsm.cluster.allocator`) so the joins'
    host temporaries are not mapped afresh under the nanny's allocator setting.

    Args:
        name: the plugin's name (unique per matcher; tasks find their state by it).
        store_dir: the partition store's directory (every worker must be able to read it).
        backend_name: the engine backend (``"auto"``, ``"numpy"`` or ``"cupy"``).
        adjacency: ``"auto"``, ``"device"``, ``"host"`` or ``"gather"``.
        device_budget: device bytes this worker may hold (None:
            :func:`~distsm.residency.default_device_budget`).
    """

    def __init__(self, name: str, store_dir: str, backend_name: str, adjacency: str = "auto",
                 device_budget: int | None = None):
        self.name = name
        self.store_dir = store_dir
        self.backend_name = backend_name
        self.adjacency = adjacency
        self.device_budget = device_budget

    def setup(self, worker: Any) -> None:
        from distsm.partition import PartitionStore

        threshold = cluster_options().mmap_threshold
        self.heap_temporaries = threshold is not None and set_mmap_threshold(threshold)
        self.worker = str(worker.name)
        self.backend = get_backend(self.backend_name)
        self.budget = self.device_budget or default_device_budget(self.backend)
        self.store = PartitionStore.open(self.store_dir)
        self.residency = Residency(self.backend, self.store, self.adjacency, self.budget, site=f"worker {self.worker}")
        self.plans = PlanCache()
        self.warm_seconds: float | None = None
        self._warm_lock = threading.Lock()  # a worker's load tasks may run on several threads

    def warm(self) -> float:
        """Warm this worker's process once (:func:`~distsm.warm.warm_process`; GPU workers, while
        ``distsm.cluster.warm-workers``): the seconds it took, 0 when it had nothing to do.  The warm-up's small
        graph and its pool blocks are gone when it returns, so the site's peak device bytes start after it."""
        with self._warm_lock:
            if self.warm_seconds is None:
                from distsm.warm import warm_process

                warm = self.backend.on_device and cluster_options().warm_workers
                self.warm_seconds = warm_process(cast(BackendName, self.backend.name)) if warm else 0.0
                if warm:
                    # Its device arrays held in reference cycles stay in use until collected: without this a
                    # budgeted worker (tests/test_cluster.py's peak test) peaked past its budget when it first built
                    # the whole graph's arrays.
                    gc.collect()
                    release_device_memory(self.backend)
                    self.backend.reset_peak()
            return self.warm_seconds

    def teardown(self, worker: Any) -> None:
        """Drop every part, index and filter this matcher loaded and give the device memory back."""
        self.residency.release()
        self.residency = Residency(self.backend, self.store, self.adjacency, self.budget, site=self.residency.site)
        self.plans = PlanCache()
        gc.collect()  # device arrays held in reference cycles go back to the pool before the pool is emptied
        release_device_memory(self.backend)
        self.backend.reset_peak()  # once this matcher's arrays are gone: the next one on this process starts afresh

    @property
    def mode(self) -> str:
        """The adjacency mode (decided when the whole graph is first read)."""
        self.residency.whole_graph()
        return self.residency.mode

    def job_budget(self, budget: int | None) -> BudgetPlan:
        """The budget of one job: the caller's (default: each side's own, :func:`~distsm.kernels.budget.
        default_budget`), on the device out of core at most the join's share of the device budget."""
        device = self.residency.join_budget(default_budget(self.backend, budget))
        return BudgetPlan(device, default_budget(self.backend.host(), budget))

    # ------------------------------------------------------------------ Site
    def slices(self, query: Graph, sem: Semantics, count: int) -> list[Slice]:
        """About ``count`` slices of ``query``'s global join, cut here as the client cuts the queries it slices
        (:func:`~distsm.plan.slices.global_slices`, on the host over the memory-mapped index)."""
        numpy = get_backend("numpy")
        host = self.residency.mapped_index()
        return global_slices(numpy, host, query, sem, numpy.candidates(host, query, homomorphism=sem.homomorphism),
                             count)

    def cross_vertices(self) -> np.ndarray:
        return self.store.cross_vertices()



def state_of(name: str) -> WorkerSite:
    """The :class:`WorkerSite` registered under ``name`` on this worker (RuntimeError once its matcher closed)."""
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
