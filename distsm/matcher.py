"""``Matcher``: one data graph, partitioned and pinned to the workers of a Dask cluster, serving query batches.

    with distsm.Matcher("data.graph", partitions=4) as m:      # starts a local cluster (one worker per GPU)
        m.count(query)                                         # one query, blocking
        batch = m.submit(queries, timeout=60)                   # one future per query, at once
        for result in batch.as_completed():
            print(result.query, result.count, result.plan["strategy"])

The data graph is partitioned once (the store lives in a directory every worker can read); each part is loaded
onto its worker (the GPU on dask-cuda workers) and kept there across queries.  Plans are made here, in the
client, and shipped with the tasks.  Task keys are ``distsm-{load,intra,inter,merge}-…`` so the dashboard's Task
Stream and Progress show one group per stage, and each batch runs inside a ``distributed.span``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import replace
from typing import Any

import numpy as np

from distsm.api import GraphLike, Semantics, as_graph
from distsm.arguments import check_choice, check_int
from distsm.cluster import tasks
from distsm.cluster.batch import Batch, QueryResult
from distsm.cluster.monitor import DistsmMonitor
from distsm.cluster.placement import Placement, alive_workers
from distsm.cluster.start import ClusterError, connect
from distsm.graph import Graph
from distsm.kernels import BACKENDS, engine, get_backend
from distsm.labels import reconcile
from distsm.partitioned import plan_inter

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
    """

    def __init__(self, data: GraphLike, cluster: Any = None, partitions: int | None = None, backend: str = "auto",
                 memory_budget: int | None = None, *, partition_dir: str | os.PathLike | None = None,
                 partition_method: str = "metis", partition_seed: int = 0, gpus: str | int | None = "all",
                 workers: int | None = None, dashboard_address: str | None = ":8787",
                 inter_slices: int | None = None, load_timeout: float = 600.0):
        from distsm.partition import load_or_build

        # Every argument is checked before a cluster starts: a typo must not cost a cluster's start-up time.
        check_choice("backend", backend, BACKENDS)
        check_int("partitions", partitions, minimum=1)
        check_int("memory_budget", memory_budget, minimum=1)
        self.backend = backend
        self.memory_budget = memory_budget
        self.data = as_graph(data, role="data")
        self._tmpdir = None
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
        """Close the client and cluster this matcher started and remove its temporary store."""
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
        futs = [self.client.submit(tasks.load_part, self.store_dir, p, self.backend, key=f"distsm-load-{_token()}",
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
               names: list[str] | None = None, strategy: str | None = None) -> Batch:
        """Submit a batch; returns at once with one future per query (see :class:`~distsm.cluster.batch.Batch`).

        ``queries`` is one query or a list (graphs, paths or networkx graphs); ``timeout`` (seconds, for the
        whole batch from now) turns unfinished queries into ``timeout`` results; ``listing`` returns rows.
        ``strategy`` (``"pbe"`` or ``"global"``) overrides the planner's choice.  A PBE plan runs every part's
        intra-partition join plus the spanning searches (results carry the intra/inter split); a global plan
        runs one join over the whole graph, sliced over the workers, that counts every match (the intra joins
        would only repeat part of its work), so its results carry no split.
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
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
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
                plan = plan_inter(self._plan_backend, self._index, q, sem, self.cross_edge_count, self.data.m)
                if strategy is not None and strategy != plan.strategy:
                    if strategy not in ("pbe", "global"):
                        raise ValueError(f"strategy must be 'pbe' or 'global', got {strategy!r}")
                    plan = replace(plan, strategy=strategy, reason=f"forced (the cost model chose {plan.strategy})")
                whole = plan.strategy == "global" and self.k > 1 and self.cross_edge_count > 0
                plan_s = time.perf_counter() - t
                summary = {"strategy": plan.strategy, "reason": plan.reason, "shared": plan.shared,
                           "groups": [list(g.prime_edges) for g in plan.groups],
                           "spanning_fraction": plan.spanning_fraction, "partitions": self.k}
                plans[name] = summary
                intra = [] if whole else [
                    self.client.submit(tasks.intra, self.store_dir, p, q, sem, self.memory_budget, self.backend,
                                       listing, limit, key=f"distsm-intra-{_token()}", workers=[addrs[p]],
                                       allow_other_workers=True, pure=False)
                    for p in range(self.k)]
                # Unpinned: every worker holds the whole graph's adjacency, and the scheduler's queue gives each
                # slice to the next worker with a free thread (skewed slices balance themselves).
                inter = [self.client.submit(tasks.inter, self.store_dir, q, sem, self.memory_budget, self.backend,
                                            groups, start, listing, limit, whole, key=f"distsm-inter-{_token()}",
                                            pure=False)
                         for groups, start in self._inter_jobs(plan)]
                meta = {"batch": batch_id, "query": name, "query_vertices": q.n, "semantics": sem.as_dict(),
                        "plan": summary, "plan_seconds": {"plan": plan_s}, "listing": listing, "split": not whole}
                merge_futs.append(self.client.submit(tasks.merge, meta, intra, inter, limit,
                                                     key=f"distsm-merge-{_token()}", pure=False))
                pieces.append(intra + inter)
            self.client.log_event("distsm-batch", {"batch": batch_id, "queries": plans, "partitions": self.k,
                                                   "semantics": sem.as_dict()})
        return Batch(self.client, batch_id, names, merge_futs, pieces, timeout, submitted)

    def _inter_jobs(self, plan: Any) -> list[tuple[list[Any] | None, range]]:
        """(edge groups, or None for the global join; range of start vertex ids) of every spanning-search task
        of a plan: one task per slice, balanced by cross-edge degree (by degree for the global join).  The ranges
        cover every vertex id once."""
        if self.k == 1 or self.cross_edge_count == 0:
            return []
        if plan.strategy == "global":
            # Degree is a rough proxy for power-law work: cut finer than one slice per worker so that the
            # scheduler can even out the rest.
            groups = None
            starts = balanced_starts(self._degree_weights, self.inter_slices)  # vertex ids are the indices
        else:
            groups = list(plan.groups)
            starts = self._cross[balanced_starts(self._cross_weights, self.inter_slices)]
        cuts = [0, *starts[1:].tolist(), self.data.n]
        return [(groups, range(a, b)) for a, b in zip(cuts[:-1], cuts[1:])]

    def _one(self, query: GraphLike, **opts: Any) -> QueryResult:
        timeout = opts.pop("timeout", None)
        result = self.submit([query], timeout=timeout, **opts).results()[0]
        if not result.ok:
            raise RuntimeError(f"query {result.query} ended {result.status}: {result.error}")
        return result

    def count(self, query: GraphLike, *, induced: bool = False, homomorphism: bool = False, unique: bool = False,
              timeout: float | None = None) -> int:
        """Count one query's matches on the cluster (blocking)."""
        return int(self._one(query, induced=induced, homomorphism=homomorphism, unique=unique,
                             timeout=timeout).count)

    def match(self, query: GraphLike, *, limit: int | None = None, induced: bool = False,
              homomorphism: bool = False, unique: bool = False, timeout: float | None = None) -> np.ndarray:
        """List one query's matches (global vertex ids, column ``i`` = query vertex ``i``)."""
        r = self._one(query, induced=induced, homomorphism=homomorphism, unique=unique, timeout=timeout,
                      listing=True, limit=limit)
        return r.rows


def _token() -> str:
    return uuid.uuid4().hex
