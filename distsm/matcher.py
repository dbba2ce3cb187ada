"""``Matcher``: one data graph, partitioned and pinned to the workers of a Dask cluster, serving query batches.

    with distsm.Matcher("data.graph", partitions=4) as m:      # starts a local cluster (one worker per GPU)
        m.count(query)                                         # one query, blocking
        batch = m.submit(queries, timeout=60)                   # one future per query, at once
        for result in batch.as_completed():                     # QueryResults as queries finish
            print(result.query, result.count, result.strategy)

The data graph is partitioned once (the store lives in a directory every worker can read); each part is loaded
onto its worker (the GPU on dask-cuda workers) and kept there across queries.  Plans are made here, in the
client, and shipped with the tasks: the jobs of :mod:`distsm.plan.execute`, the same the in-process executor
runs, so both give the same :class:`~distsm.plan.execute.QueryResult`.  What a matcher keeps on the workers lives in
a ``WorkerPlugin`` (:class:`~distsm.cluster.tasks.WorkerState`) that :meth:`Matcher.close` tears down.  Task keys
are ``distsm-{load,intra,inter,merge}-…`` so the dashboard's Task Stream and Progress show one group per stage,
and each batch runs inside a ``distributed.span``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
import uuid
from typing import Any

import numpy as np

from distsm.api import GraphLike, as_graph
from distsm.arguments import check_choice, check_int
from distsm.cluster import tasks
from distsm.cluster.batch import Batch
from distsm.cluster.monitor import DistsmMonitor
from distsm.cluster.placement import Placement, alive_workers
from distsm.cluster.start import DEFAULT_DASHBOARD, ClusterError, connect
from distsm.graph import Graph
from distsm.kernels import engine, get_backend
from distsm.labels import reconcile
from distsm.plan.execute import QueryResult, jobs
from distsm.plan.search import plan_inter
from distsm.semantics import Semantics
from distsm.vocabulary import BACKENDS, BackendName, PartitionMethod, Strategy

_batches = itertools.count(1)


def balanced_starts(weights: np.ndarray, pieces: int) -> np.ndarray:
    """Where each of at most ``pieces`` contiguous non-empty runs of ``weights`` with about equal totals begins
    (ascending indices, the first 0; empty for no weights)."""
    if weights.shape[0] == 0:
        return np.zeros(0, np.int64)
    cum = np.cumsum(weights.astype(np.float64))
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, pieces) / pieces, side="left") + 1
    return np.unique(np.concatenate(([0], cuts[cuts < weights.shape[0]])))


def balanced_slices(vertices: np.ndarray, weights: np.ndarray, pieces: int) -> list[np.ndarray]:
    """Split ``vertices`` into at most ``pieces`` contiguous non-empty slices of about equal total weight."""
    bounds = [*balanced_starts(weights, pieces).tolist(), vertices.shape[0]]
    return [vertices[a:b] for a, b in zip(bounds[:-1], bounds[1:])] if vertices.shape[0] else []


class Matcher:
    """Partitioned subgraph matching on a Dask cluster.

    Args:
        data: the data graph (a :class:`~distsm.Graph`, a path, or a networkx graph).
        cluster: a ``distributed.Client``, a cluster object, a scheduler address, a scheduler file, or None to
            start a local cluster (``gpus``/``workers`` as in :func:`distsm.cluster.local`).
        partitions: number of parts (default: one per worker).
        backend: engine backend on the workers (``"auto"``: CuPy where a GPU is present).
        memory_budget: bytes one task's join may hold (default: the worker backend's).
        partition_dir: directory of the partition store, readable by every worker (default: beside the data
            file when ``data`` is a path, else a temporary directory removed by :meth:`close`).
        partition_method, partition_seed: the partitioner.
        inter_slices: pieces each spanning search is split into (default: four per worker; they are not pinned,
            so the scheduler hands them to workers as they free up, which evens out skewed work).
        load_timeout: seconds the initial partition loads may take.
        dashboard_address: where the dashboard of a cluster this matcher starts listens (default loopback only,
            ``127.0.0.1:8787``; ``":8787"`` listens on every interface, ``None`` disables it).
    """

    def __init__(self, data: GraphLike, cluster: Any = None, partitions: int | None = None,
                 backend: BackendName = "auto", memory_budget: int | None = None, *,
                 partition_dir: str | os.PathLike | None = None,
                 partition_method: PartitionMethod = "metis", partition_seed: int = 0, gpus: str | int | None = "all",
                 workers: int | None = None, dashboard_address: str | None = DEFAULT_DASHBOARD,
                 inter_slices: int | None = None, load_timeout: float = 600.0):
        from distsm.partition import load_or_build

        # Every argument is checked before a cluster starts: a typo must not cost a cluster's start-up time.
        check_choice("backend", backend, BACKENDS)
        check_int("partitions", partitions, minimum=1)
        check_int("memory_budget", memory_budget, minimum=1)
        self.backend = backend
        self.memory_budget = memory_budget
        self.data = as_graph(data, role="data")
        self._tmpdir: str | None = None
        self._state: str | None = None
        self._owns_client = not (cluster is not None and type(cluster).__name__ == "Client")
        self.client, self._cluster = connect(cluster, gpus=gpus, workers=workers, dashboard_address=dashboard_address)
        try:
            self.client.register_plugin(DistsmMonitor())
            self.n_workers = len(alive_workers(self.client))
            if self.n_workers == 0:
                raise ClusterError("the cluster has no workers")
            k = partitions if partitions is not None else self.n_workers
            if partition_dir is None:
                partition_dir = self._default_store_dir(data, k, partition_method, partition_seed)
            t = time.perf_counter()
            self.store = load_or_build(self.data, k, directory=partition_dir, method=partition_method,
                                       seed=partition_seed, fallback=False)
            self.partition_seconds = time.perf_counter() - t
            assert self.store.directory is not None  # a store built in partition_dir
            self.store_dir = os.fspath(self.store.directory)
            self.k = int(self.store.k)
            src, dst, _ = self.store.cross_edges()
            src, dst = np.asarray(src), np.asarray(dst)
            self.cross_edge_count = int(src.shape[0])
            self._cross = self.store.cross_vertices()
            cross_deg = np.bincount(src, minlength=self.data.n) + np.bincount(dst, minlength=self.data.n)
            self._cross_weights = cross_deg[self._cross]
            self._degree_weights = np.maximum(self.data.degrees, 1)
            self._plan_backend = get_backend("numpy")
            self._index = self.store.adjacency_index(mmap=True)
            self.inter_slices = inter_slices or 4 * self.n_workers
            self.load_timeout = load_timeout
            self.placement = Placement(self.k)
            # One plugin per matcher: its caches are this matcher's alone and go when it closes.
            self._state = f"distsm-state-{uuid.uuid4().hex[:12]}"
            self.client.register_plugin(tasks.WorkerState(self._state, self.store_dir, self.backend),
                                        name=self._state)
            self.load_report = self.load()
        except BaseException:
            self.close()
            raise

    def _default_store_dir(self, data: GraphLike, k: int, method: str, seed: int) -> str:
        """Beside the data file when its folder is writable, else the user's cache, else a temporary folder."""
        name = f"k{k}-{method}-{seed}"
        if isinstance(data, (str, os.PathLike)):
            path = os.path.abspath(os.fspath(data))
            if os.access(os.path.dirname(path), os.W_OK):
                return f"{path}.distsm/{name}"
            from distsm.partition import graph_fingerprint

            cache = os.path.join(os.path.expanduser("~"), ".cache", "distsm", "partitions")
            try:
                os.makedirs(cache, exist_ok=True)
                return os.path.join(cache, f"{graph_fingerprint(self.data).split(':')[-1][:16]}-{name}")
            except OSError:
                pass
        self._tmpdir = tempfile.mkdtemp(prefix="distsm-parts-")
        return os.path.join(self._tmpdir, name)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Matcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release what this matcher keeps on the workers (parts, indexes, device memory), close the client and
        cluster it started and remove its temporary store."""
        if self._state is not None:
            if self.client.status == "running":
                self.client.unregister_worker_plugin(self._state)
            self._state = None
        if self._owns_client and getattr(self, "client", None) is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    @property
    def dashboard_link(self) -> str | None:
        return getattr(self.client, "dashboard_link", None)

    def load(self) -> list[dict[str, Any]]:
        """Load every part onto its worker (``distsm-load-*`` tasks); returns their reports."""
        addrs = self.placement.resolve(self.client)
        # Strict pins: a part must land on its own worker (work stealing may not move it); a worker dying
        # meanwhile shows up as a timeout rather than a hang.
        futs = [self.client.submit(tasks.load_part, self._state, p, key=f"distsm-load-{_token()}",
                                   workers=[addrs[p]], allow_other_workers=False, pure=False)
                for p in range(self.k)]
        from distributed import wait

        try:
            wait(futs, timeout=self.load_timeout)
        except TimeoutError as e:
            self.client.cancel(futs)
            raise ClusterError(f"loading the partitions did not finish within {self.load_timeout}s") from e
        return self.client.gather(futs)

    # ------------------------------------------------------------------ queries
    def submit(self, queries: Any, *, induced: bool = False, homomorphism: bool = False, unique: bool = False,
               timeout: float | None = None, listing: bool = False, limit: int | None = None,
               names: list[str] | None = None, strategy: Strategy | str | None = None) -> Batch:
        """Submit a batch; returns at once (see :class:`~distsm.cluster.batch.Batch`).

        ``queries`` is one query or a list (graphs, paths or networkx graphs); ``timeout`` (seconds, for the
        whole batch from now) stops unfinished queries on the workers and turns them into ``timeout`` results;
        ``listing`` returns rows.  ``strategy`` (:class:`~distsm.vocabulary.Strategy` or ``"pbe"``/``"global"``)
        overrides the planner's choice; what each strategy runs is :func:`distsm.plan.execute.jobs`.
        """
        from distributed import span

        if isinstance(queries, (Graph, str, os.PathLike)) or hasattr(queries, "is_directed"):
            queries = [queries]
        graphs = [reconcile(as_graph(q, role="query"), self.data) for q in queries]
        if names is None:
            names = [os.path.basename(os.fspath(q)) if isinstance(q, (str, os.PathLike)) else f"query{i}"
                     for i, q in enumerate(queries)]
        if len(names) != len(graphs):
            raise ValueError("names must have one entry per query")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if strategy is not None:
            strategy = Strategy.parse(strategy)
        sem = Semantics(induced, homomorphism, unique)
        for q in graphs:
            engine.check_pair(self.data, q)
        batch_id = f"b{next(_batches)}-{uuid.uuid4().hex[:6]}"
        addrs = self.placement.resolve(self.client)
        merge_futs, pieces, plans = [], [], {}
        submitted = time.monotonic()
        with span(f"distsm-batch-{batch_id}"):
            for name, q in zip(names, graphs):
                t = time.perf_counter()
                plan = plan_inter(self._plan_backend, self._index, q, sem, self.cross_edge_count, self.data.m,
                                  strategy=strategy)
                plan_s = time.perf_counter() - t
                plans[name] = {**plan.summary(), "partitions": self.k}
                futs = []
                for job in jobs(plan, self.k, self.cross_edge_count, self._slices(plan.strategy)):
                    # Intra jobs prefer their part's worker; spanning slices are unpinned: every worker holds the
                    # whole graph's adjacency, and the scheduler gives each slice to the next free worker thread.
                    pin = {} if job.part is None else {"workers": [addrs[job.part]], "allow_other_workers": True}
                    futs.append(self.client.submit(tasks.job, self._state, job, q, sem, self.memory_budget,
                                                   listing, limit, key=f"distsm-{job.stage}-{_token()}", pure=False,
                                                   **pin))
                merge_futs.append(self.client.submit(tasks.combine, name, q, sem, plan, self.k, batch_id, plan_s,
                                                     listing, limit, *futs, key=f"distsm-merge-{_token()}",
                                                     pure=False))
                pieces.append(futs)
            self.client.log_event("distsm-batch", {"batch": batch_id, "queries": plans, "partitions": self.k,
                                                   "semantics": sem.as_dict()})
        return Batch(self.client, batch_id, names, merge_futs, pieces, timeout, submitted)

    def _slices(self, strategy: Strategy) -> list[range]:
        """Ranges of start vertex ids splitting a spanning search into tasks, balanced by cross-edge degree (by
        degree for a global join); they cover every vertex id once."""
        if strategy is Strategy.GLOBAL:
            # Degree is a rough proxy for power-law work: cut finer than one slice per worker so that the
            # scheduler can even out the rest.
            starts = balanced_starts(self._degree_weights, self.inter_slices)  # vertex ids are the indices
        else:
            starts = self._cross[balanced_starts(self._cross_weights, self.inter_slices)]
        cuts = [0, *starts[1:].tolist(), self.data.n]
        return [range(a, b) for a, b in zip(cuts[:-1], cuts[1:])]

    def _one(self, query: GraphLike, **opts: Any) -> QueryResult:
        timeout = opts.pop("timeout", None)
        result = self.submit([query], timeout=timeout, **opts)[0]
        if result.status == "timeout":
            raise TimeoutError(f"query {result.query} did not finish within timeout={timeout} seconds; its work "
                               "was stopped")
        if result.exception is not None:
            raise result.exception
        if not result.ok:
            raise RuntimeError(f"query {result.query} ended {result.status}: {result.error}")
        return result

    def count(self, query: GraphLike, *, induced: bool = False, homomorphism: bool = False, unique: bool = False,
              timeout: float | None = None) -> int:
        """Count one query's matches on the cluster (blocking)."""
        count = self._one(query, induced=induced, homomorphism=homomorphism, unique=unique, timeout=timeout).count
        assert count is not None  # _one raises unless the query finished
        return int(count)

    def match(self, query: GraphLike, *, limit: int | None = None, induced: bool = False,
              homomorphism: bool = False, unique: bool = False, timeout: float | None = None) -> np.ndarray:
        """List one query's matches (global vertex ids, column ``i`` = query vertex ``i``)."""
        r = self._one(query, induced=induced, homomorphism=homomorphism, unique=unique, timeout=timeout,
                      listing=True, limit=limit)
        assert r.rows is not None  # a finished listing holds its rows
        return r.rows


def _token() -> str:
    return uuid.uuid4().hex
