"""``Matcher``: one data graph, partitioned and pinned to the workers of a Dask cluster, serving query batches.

    with distsm.Matcher("data.graph", partitions=4) as m:      # starts a local cluster (one worker per GPU)
        m.count(query)                                         # one query, blocking
        batch = m.submit(queries, timeout=60)                   # one result per query, submitted at once
        for result in batch.as_completed():                     # QueryResults as queries finish
            print(result.query, result.count, result.strategy)

The data graph is partitioned once (the store lives in a directory every worker can read); each part is loaded
onto its worker (the GPU on dask-cuda workers) and kept there across queries.  Plans are made here, in the
client, and shipped with the tasks: the jobs of :mod:`distsm.plan.execute`, the same the in-process executor
runs, so both give the same :class:`~distsm.plan.results.QueryResult`.  What a matcher keeps on the workers lives in
a ``WorkerPlugin`` (:class:`~distsm.cluster.worker_site.WorkerSite`) that :meth:`Matcher.close` tears down.  Task keys
are ``distsm-{load,intra,inter,merge}-…`` so the dashboard's Task Stream and Progress show one group per stage
(``distsm-wholes-…`` for a group of counts sent whole to one worker: each one's job and merge, in one task;
``distsm-whole-…`` for a listing sent whole), and each batch runs inside a ``distributed.span``.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
import time
import uuid
from typing import Any

import numpy as np

from distsm.arguments import check_size, entry_point
from distsm.cluster import tasks
from distsm.cluster.worker_site import WorkerSite
from distsm.cluster.batch import Batch, Unit
from distsm.cluster.grouping import LabelDegreeCost, whole_groups
from distsm.cluster.monitor import BATCH_TOPIC, DistsmMonitor
from distsm.cluster.placement import PartOwners, alive_workers
from distsm.cluster.start import ClusterError, connect
from distsm.cluster.versions import check_versions
from distsm.graph import Graph
from distsm.kernels import get_backend
from distsm.kernels.candidate_edges import scan_entries
from distsm.plan.distribution import Directions, Sites, by_estimate, decide, shaped, whole_plan
from distsm.plan.execute import jobs, whole_graph_join
from distsm.plan.results import QueryResult
from distsm.plan.inter import InterPartitionPlan
from distsm.plan.search import cross_fraction, plan_inter, start_candidates
from distsm.plan.slices import Slice, cut, neighbour_ranges
from distsm.request import GraphLike, Partitioning, as_graph, prepare
from distsm.resources import Resources
from distsm.residency import partitions_for_budget
from distsm.semantics import EVERY_MATCH, Semantics
from distsm.vocabulary import BackendName, Distribution, Strategy

logger = logging.getLogger(__name__)
_batches = itertools.count(1)
#: What the client plans a batch with: the host (the workers count on their own backends).
CLIENT_PLANNING = Resources(backend="numpy")


def _running_tasks(dask_worker: Any) -> int:
    """Tasks running on ``dask_worker``, cancelled ones still finishing included (run through ``client.run``)."""
    return sum(ts.state in ("executing", "cancelled", "long-running") for ts in dask_worker.state.tasks.values())


def _stop_heartbeat(dask_worker: Any) -> None:
    """Stop ``dask_worker``'s periodic heartbeat to the scheduler (run through ``client.run`` at shutdown)."""
    callback = dask_worker.periodic_callbacks.get("heartbeat")
    if callback is not None:
        callback.stop()


def work_estimate(candidates: list[np.ndarray], degrees: np.ndarray) -> float:
    """A query's work by degree: the total degree of the candidates of its most selective vertex (the adjacency
    a join starting there reads at its first level); 0 when a vertex has no candidate."""
    smallest = min(candidates, key=lambda c: c.shape[0])
    return float(degrees[np.asarray(smallest, np.int64)].sum())


def longest_first(estimates: list[float]) -> list[int]:
    """Dask priorities (higher runs first) that start a batch's queries heaviest first by ``estimates``: the
    longest-processing-time order, so a heavy query does not start last and end the batch alone on one worker.
    The heaviest gets ``len - 1``, the lightest 0; ties keep submission order."""
    order = sorted(range(len(estimates)), key=lambda i: (-estimates[i], i))
    priority = [0] * len(estimates)
    for rank, i in enumerate(order):
        priority[i] = len(estimates) - 1 - rank
    return priority


class Matcher:
    """Partitioned subgraph matching on a Dask cluster.

    Args:
        data: the data graph (a :class:`~distsm.Graph`, a path, or a networkx graph).
        cluster: a ``distributed.Client``, a cluster object, a scheduler address, a scheduler file, or a
            :class:`~distsm.LocalClusterSpec` (None: ``LocalClusterSpec()``, one worker per GPU, else two CPU
            workers; a cluster this matcher starts closes with it).
        partitions: the number of parts, or a :class:`~distsm.Partitioning` (count, partitioner and seed, the
            store's directory, and where each worker's spanning searches read the whole graph's adjacency).
            ``"auto"`` (default): one part per worker, or more when the workers' device budget calls for smaller
            parts (:func:`~distsm.residency.partitions_for_budget`, as in process).  The store's directory must be
            readable by every worker (default: beside the data file when ``data`` is a path, else a temporary
            directory removed by :meth:`close`).  Adjacency ``"auto"`` (default) keeps it on the device when its
            index fits in half the worker's device budget, else ``"host"``; ``"device"``, ``"host"`` (the partition
            store's memory-mapped files, shared by the workers of a host, read in place; page-locked for zero-copy
            reads on a GPU) or ``"gather"`` (the adjacency lists a table chunk reads are copied to the device per
            chunk).  See :class:`~distsm.residency.Residency`.
        backend: engine backend on the workers (``"auto"``: CuPy where a GPU is present).
        memory_budget: bytes one task's join may hold, or a size such as ``"1GB"`` (default: the worker backend's).
        device_budget: device bytes each worker may hold (default: the device memory free on the worker, or
            the ``distsm.cluster.device-budget`` option; on CPU workers half the host's memory).
        inter_slices: slices each spanning search, and each heavy query sent whole, is split into (default: four
            per worker; they are not pinned, so the scheduler hands them to workers as they free up, which evens
            out skewed work).
        load_timeout: seconds the initial partition loads may take.

    How :meth:`submit` spreads a batch: under ``distribute="auto"`` a count goes whole and its worker splits it into
    slices over the cluster once its counting plan shows it heavy (:func:`distsm.cluster.tasks.wholes`); such
    queries are not filtered or planned in the client.  Queries without a trial join (listings, induced queries,
    forced PBE, workers that gather their adjacency) are spread by the client's estimates
    (:func:`~distsm.plan.distribution.by_estimate`).  Workers start a batch's queries heaviest first
    (:func:`longest_first`, by the adjacency each query's refinement would scan, or for a query not filtered here
    a label-and-degree bound of it: :class:`~distsm.cluster.grouping.LabelDegreeCost`).  Counts sent whole go in
    groups, a few tasks per worker (:func:`~distsm.cluster.grouping.whole_groups`): one task per small query would
    cost more scheduling than counting.  The decisions are those of :mod:`distsm.plan.distribution`, which the
    in-process executor takes too.
    """

    @entry_point
    def __init__(self, data: GraphLike, cluster: Any = None, partitions: int | str | Partitioning = "auto",
                 backend: BackendName = "auto", memory_budget: int | str | None = None, *,
                 device_budget: int | str | None = None,
                 inter_slices: int | None = None, load_timeout: float = 600.0):
        # Every argument is checked before a cluster starts: a typo must not cost a cluster's start-up time.
        how = partitions if isinstance(partitions, Partitioning) else Partitioning(partitions, adjacency="auto")
        memory_budget = check_size("memory_budget", memory_budget)
        device_budget = check_size("device_budget", device_budget)
        self.partitioning = how
        self.adjacency = how.adjacency
        self.device_budget = device_budget
        self.backend = backend
        self.memory_budget = memory_budget
        self.data = as_graph(data, role="data")
        self._tmpdir: str | None = None
        self._state: str | None = None
        self._owns_client = not (cluster is not None and type(cluster).__name__ == "Client")
        self.client, self._cluster = connect(cluster)
        try:
            check_versions(self.client)
            self.client.register_plugin(DistsmMonitor())
            self.n_workers = len(alive_workers(self.client))
            if self.n_workers == 0:
                raise ClusterError("the cluster has no workers")
            t = time.perf_counter()
            logger.info("partitioning %d vertices and %d edges for %d workers (%s)", self.data.n, self.data.m,
                        self.n_workers, how.method)
            self.store = self._partition(data, how)
            self.partition_seconds = time.perf_counter() - t
            logger.info("partition store of %d parts ready in %.1f s: %s", self.store.k, self.partition_seconds,
                        self.store.directory)
            assert self.store.directory is not None  # a store built in its directory
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
            self._label_cost: LabelDegreeCost | None = None
            self.inter_slices = inter_slices or 4 * self.n_workers
            self.load_timeout = load_timeout
            self.owners = PartOwners(self.k)
            # One plugin per matcher: its caches are this matcher's alone and go when it closes.
            self._state = f"distsm-state-{uuid.uuid4().hex[:12]}"
            self.client.register_plugin(WorkerSite(self._state, self.store_dir, self.backend, how.adjacency,
                                                          device_budget), name=self._state)
            self.load_report = self.load()
        except BaseException:
            self.close()
            raise

    def _partition(self, data: GraphLike, how: Partitioning) -> Any:
        """The partition store: ``how.parts`` parts, or for ``"auto"`` one per worker, more when a part's index
        must fit the workers' ``device_budget`` out of core (:func:`~distsm.residency.partitions_for_budget`)."""
        from distsm.partition import load_or_build

        def build(k: int) -> Any:
            directory = how.directory or self._default_store_dir(data, k, how.method, how.seed)
            return load_or_build(self.data, k, directory=directory, method=how.method, seed=how.seed, fallback=False)

        if how.parts != "auto":
            return build(int(how.parts))
        if self.device_budget is None:
            return build(self.n_workers)
        return partitions_for_budget(self.data, self.device_budget, how.adjacency, build, multiple=self.n_workers)

    def _default_store_dir(self, data: GraphLike, k: int, method: str, seed: int) -> str:
        """Beside the data file when its folder is writable, else the user's cache, else a temporary folder."""
        name = f"k{k}-{method}-{seed}"
        if isinstance(data, (str, os.PathLike)):
            path = os.path.abspath(os.fspath(data))
            if os.access(os.path.dirname(path), os.W_OK):
                return f"{path}.distsm/{name}"
            from distsm.graph import graph_fingerprint

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
                if self._cluster is not None:
                    self._drain()
                self.client.unregister_worker_plugin(self._state)
                if self._cluster is not None:
                    self._quiet_heartbeats()
            self._state = None
        if self._owns_client and getattr(self, "client", None) is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def _quiet_heartbeats(self) -> None:
        """Stop the workers' heartbeats before the cluster this matcher started closes: a heartbeat in flight when
        the scheduler goes logs "Failed to communicate with scheduler during heartbeat" and a traceback on the
        user's terminal (seen on a loaded 2-core machine).  The workers close with the cluster right after."""
        try:
            self.client.run(_stop_heartbeat)
        except Exception:  # a worker lost meanwhile: nothing of its to quiet
            pass

    def _drain(self, timeout: float = 10.0) -> None:
        """Wait, at most ``timeout`` seconds, until no task runs on the workers.  Cancelled and timed-out joins
        stop at their next chunk; a cluster closed under them makes its workers log cancellation warnings and
        lost-scheduler tracebacks on the user's terminal as they go."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                running = self.client.run(_running_tasks)
            except Exception:  # a worker lost meanwhile: nothing to wait for there
                return
            if not any(running.values()):
                return
            time.sleep(0.1)

    @property
    def dashboard_link(self) -> str | None:
        return getattr(self.client, "dashboard_link", None)

    def load(self) -> list[dict[str, Any]]:
        """Load every part onto its worker (``distsm-load-*`` tasks), and the whole graph's adjacency onto each
        worker that owns no part (reported with ``part`` None), all at once; returns their reports."""
        addrs = self.owners.resolve(self.client)
        # A worker without a part (fewer parts than workers: a graph every worker holds whole) loads what its
        # searches read now, beside the others, rather than in its first query's time.
        spare = sorted(set(alive_workers(self.client).values()) - set(addrs.values()))
        # Strict pins: a part must land on its own worker (work stealing may not move it); a worker dying
        # meanwhile shows up as a timeout rather than a hang.
        futs = [self.client.submit(tasks.load_part, self._state, p, key=f"distsm-load-{_token()}",
                                   workers=[addr], allow_other_workers=False, pure=False)
                for p, addr in [*addrs.items(), *((None, a) for a in spare)]]
        from distributed import as_completed

        t = time.perf_counter()
        try:
            # Each load is reported as it ends: at tens of millions of edges a load takes seconds.
            for done, fut in enumerate(as_completed(futs, timeout=self.load_timeout), 1):
                if fut.status == "finished":
                    r = fut.result()
                    logger.info("loaded %s on worker %s (%d of %d, %.1f s)",
                                "the whole graph" if r["part"] is None else f"part {r['part']}", r["worker"], done,
                                len(futs), time.perf_counter() - t)
        except TimeoutError as e:
            self.client.cancel(futs)
            raise ClusterError(f"loading the partitions did not finish within {self.load_timeout}s") from e
        return self.client.gather(futs)

    # ------------------------------------------------------------------ queries
    @entry_point
    def submit(self, queries: Any, *, semantics: Semantics = EVERY_MATCH, timeout: float | None = None,
               listing: bool = False, limit: int | None = None, names: list[str] | None = None,
               strategy: Strategy | str | None = None, distribute: Distribution = "auto") -> Batch:
        """Submit a batch; returns at once (see :class:`~distsm.cluster.batch.Batch`).

        ``queries`` is one query or a list (graphs, paths or networkx graphs), counted or listed under
        ``semantics`` (:class:`~distsm.semantics.Semantics`: ``Semantics(induced=True)`` and so on); ``timeout``
        (seconds, for the whole batch from now) stops unfinished queries on the workers and turns them into
        ``timeout`` results; ``listing`` returns rows (at most ``limit`` per query).  ``strategy``
        (:class:`~distsm.vocabulary.Strategy` or ``"pbe"``/``"global"``) overrides the planner's choice; what each
        strategy runs is :func:`distsm.plan.execute.jobs`.
        ``distribute`` says how each query spreads over the workers: ``"whole"`` (one job on one worker: a join over
        the whole graph), ``"sliced"`` (its plan's jobs, spanning searches sliced over the workers) or ``"auto"``
        (see the class's description); each result's ``distribution`` says which ran and why."""
        from distributed import span

        if not isinstance(semantics, Semantics):
            raise TypeError(f"semantics must be a distsm.Semantics, not {type(semantics).__name__}")
        directions = Directions(None if strategy is None else Strategy.parse(strategy), distribute, listing)
        graphs, names = self._named_queries(queries, names, semantics)
        batch_id = f"b{next(_batches)}-{uuid.uuid4().hex[:6]}"
        submitted = time.monotonic()
        decided = [decide(q, semantics, directions, self.sites) for q in graphs]
        planned = [self._plan_query(q, semantics, directions.strategy, d is not None and d.measured)
                   for q, d in zip(graphs, decided)]
        total = sum(w for _, _, w, _ in planned)
        # The adjacency a query's refinement would scan (a label-and-degree bound for queries not planned here)
        # ranks the batch for the workers' start order and sizes the groups of whole queries.
        costs = [self._cost(q) if cands is None else scan_entries(self._plan_backend, self._index, cands, q)
                 for q, (_, cands, _, _) in zip(graphs, planned)]
        priorities = longest_first(costs)
        units: list[Unit] = []
        plans: dict[Any, Any] = {}
        grouped: list[int] = []
        tasks_of: list[tasks.QueryTask] = []
        addrs = self.owners.resolve(self.client)
        with span(f"distsm-batch-{batch_id}"):
            for i, (name, q, (plan, cands, work, plan_s), decision) in enumerate(
                    zip(names, graphs, planned, decided)):
                decision = decision or by_estimate(work, total, len(graphs), self.sites)
                plan = shaped(plan, decision)
                plans[name] = {**plan.summary(), "partitions": self.k, "distribution": decision.how,
                               "priority": priorities[i], "cost": costs[i]}
                if not decision.measured:
                    plans[name].update(estimated_work=work)
                split = self.inter_slices if decision.measured and self.n_workers > 1 else None
                task = tasks.QueryTask(name, q, semantics, plan, self.k, batch_id, plan_s, listing, limit,
                                       (decision.how, decision.why), split)
                tasks_of.append(task)
                if decision.how == "whole" and not listing:
                    grouped.append(i)
                else:
                    units.append(self._submit_one(task, i, cands, addrs, priorities[i]))
            units += self._submit_groups(grouped, tasks_of, costs, priorities)
            self.client.log_event(BATCH_TOPIC, {
                "batch": batch_id, "queries": plans, "partitions": self.k, "semantics": semantics.as_dict(),
                "tasks": {u.future.key: [names[i] for i in u.queries] for u in units}
                | {f.key: [names[i] for i in u.queries] for u in units for f in u.jobs}})
        return Batch(self.client, batch_id, names, units, timeout, submitted)

    def _named_queries(self, queries: Any, names: list[str] | None,
                       semantics: Semantics) -> tuple[list[Graph], list[str]]:
        """The batch's queries (one query or a list) loaded and checked against the data graph by the request
        every entry point makes (:func:`~distsm.request.prepare`, with the client's planning backend), and their
        names (given, else a path's file name or ``query<i>``)."""
        if isinstance(queries, (Graph, str, os.PathLike)) or hasattr(queries, "is_directed"):
            queries = [queries]
        graphs = list(prepare(self.data, list(queries), semantics, CLIENT_PLANNING).queries)
        if names is None:
            names = [os.path.basename(os.fspath(q)) if isinstance(q, (str, os.PathLike)) else f"query{i}"
                     for i, q in enumerate(queries)]
        if len(names) != len(graphs):
            raise ValueError("names must have one entry per query")
        return graphs, names

    def _submit_one(self, task: tasks.QueryTask, i: int, cands: Any, addrs: dict[int, str], priority: int) -> Unit:
        """Query ``i``'s own tasks: a whole listing, unpinned (every worker reads the whole graph's adjacency; the
        next free one takes it), or its plan's jobs (:meth:`_submit_jobs`)."""
        if task.distribution[0] == "whole":
            return Unit(self.client.submit(tasks.whole, self._state, task, self.memory_budget,
                                           key=f"distsm-whole-{_token()}", pure=False, priority=priority), [i])
        return self._submit_jobs(task, i, cands, addrs, priority)

    def _submit_groups(self, queries: list[int], tasks_of: list[tasks.QueryTask], costs: list[float],
                       priorities: list[int]) -> list[Unit]:
        """Submit the whole counting queries ``queries`` (indices into the batch's ``tasks_of``, ``costs`` and
        ``priorities``) in groups (:func:`~distsm.cluster.grouping.whole_groups`), one ``distsm-wholes-*`` task
        per group, unpinned (every worker reads the whole graph's adjacency: the next free one takes the next group)
        at the priority of its heaviest query.  Queries a worker may split over the cluster when their counting plan
        shows them heavy (``QueryTask.split``; :func:`distsm.cluster.tasks.wholes`) are grouped apart from those it
        may not."""
        units = []
        for split in dict.fromkeys(tasks_of[i].split for i in queries):
            alike = [i for i in queries if tasks_of[i].split == split]
            for group in whole_groups([costs[i] for i in alike], self.n_workers):
                members = [alike[j] for j in group]
                units.append(Unit(self.client.submit(tasks.wholes, self._state, [tasks_of[i] for i in members],
                                                     self.memory_budget, key=f"distsm-wholes-{_token()}", pure=False,
                                                     priority=max(priorities[i] for i in members)),
                                  members, grouped=True))
        return units

    def _cost(self, query: Graph) -> float:
        """A query's cost estimate where the client does not filter it (see
        :class:`~distsm.cluster.grouping.LabelDegreeCost`)."""
        if self._label_cost is None:
            self._label_cost = LabelDegreeCost(self.data)
        return self._label_cost(query)

    @property
    def sites(self) -> Sites:
        """The workers as the sites a batch spreads over (see :mod:`distsm.plan.distribution`)."""
        return Sites(self.n_workers, gather=any(r["adjacency"] == "gather" for r in self.load_report))

    def _plan_query(self, query: Graph, sem: Semantics, strategy: Strategy | None, split: bool
                    ) -> tuple[InterPartitionPlan, list[Any] | None, float, float]:
        """``(plan, candidates, estimated work, planning seconds)`` of one query of a batch.  A query sent whole and
        split on its worker if its counting plan shows it heavy (``split``) is not filtered or planned here."""
        t = time.perf_counter()
        if split:
            return whole_plan(), None, 0.0, time.perf_counter() - t
        cands = self._plan_backend.candidates(self._index, query, homomorphism=sem.homomorphism)
        crossing = cross_fraction(self.cross_edge_count, self.data.m)
        plan = plan_inter(self._plan_backend, self._index, query, sem, crossing, strategy=strategy, candidates=cands)
        return plan, cands, work_estimate(cands, self._degree_weights), time.perf_counter() - t

    def _submit_jobs(self, task: tasks.QueryTask, query: int, cands: list[Any] | None, addrs: dict[int, str],
                     priority: int) -> Unit:
        """Submit a sliced query's jobs (``cands``: its candidate filter here; ``addrs``: each part's worker) and
        its merge: the batch's unit answering query ``query`` (its merge future, with the job futures)."""
        plan, q = task.plan, task.graph
        assert cands is not None  # sliced queries are planned here
        # A global join's slices range over its own start candidates; PBE's over the cross vertices.
        starts = (start_candidates(self._plan_backend, self._index, q, task.sem, cands)
                  if whole_graph_join(plan, self.k, self.cross_edge_count) else None)
        futs = []
        for job in jobs(plan, self.k, self.cross_edge_count, self._slices(plan.strategy, starts)):
            # Intra jobs prefer their part's worker; spanning slices are unpinned: every worker reads the whole
            # graph's adjacency, and the scheduler gives each slice to the next free worker thread.
            pin = {} if job.part is None else {"workers": [addrs[job.part]], "allow_other_workers": True}
            futs.append(self.client.submit(tasks.job, self._state, job, q, task.sem, self.memory_budget,
                                           task.listing, task.limit, key=f"distsm-{job.stage}-{_token()}",
                                           pure=False, priority=priority, **pin))
        merged = self.client.submit(tasks.combine, task, *futs, key=f"distsm-merge-{_token()}", pure=False,
                                    priority=priority)
        return Unit(merged, [query], futs)

    def _slices(self, strategy: Strategy, starts: tuple[np.ndarray, np.ndarray] | None = None) -> list[Slice]:
        """Slices (:data:`~distsm.plan.slices.Slice`) splitting a spanning search into tasks (see
        :func:`~distsm.plan.slices.cut`): ranges of start vertex ids balanced by cross-edge degree over the cross
        vertices (PBE), or for a global join over its start candidates ``starts`` (sorted ids and their estimated
        work, from :func:`~distsm.plan.search.start_candidates`; None: every vertex, by degree); a heavy start
        vertex is split by the degrees of its neighbours."""
        ids: np.ndarray | None
        if strategy is not Strategy.GLOBAL:
            ids, weights = self._cross, self._cross_weights
        elif starts is None:
            ids, weights = None, self._degree_weights
        else:
            ids, weights = np.asarray(starts[0], np.int64), np.asarray(starts[1], np.int64)
        return cut(weights, ids, self.inter_slices, self.data.n,
                   lambda v, parts: neighbour_ranges(self._index, self._degree_weights, v, parts))

    def _one(self, query: GraphLike, **opts: Any) -> QueryResult:
        timeout = opts.pop("timeout", None)
        semantics = Semantics.of(opts.pop("induced"), opts.pop("homomorphism"), opts.pop("unique"))
        result = self.submit([query], semantics=semantics, timeout=timeout, **opts)[0]
        if result.status == "timeout":
            raise TimeoutError(f"query {result.query} did not finish within timeout={timeout} seconds; its work "
                               "was stopped")
        if result.exception is not None:
            raise result.exception
        if not result.ok:
            raise RuntimeError(f"query {result.query} ended {result.status}: {result.error}")
        return result

    @entry_point
    def count(self, query: GraphLike, *, induced: bool = False, homomorphism: bool = False, unique: bool = False,
              timeout: float | None = None) -> int:
        """Count one query's matches on the cluster (blocking)."""
        count = self._one(query, induced=induced, homomorphism=homomorphism, unique=unique, timeout=timeout).count
        assert count is not None  # _one raises unless the query finished
        return int(count)

    @entry_point
    def match(self, query: GraphLike, *, limit: int | None = None, induced: bool = False,
              homomorphism: bool = False, unique: bool = False, timeout: float | None = None) -> np.ndarray:
        """List one query's matches (global vertex ids, column ``i`` = query vertex ``i``)."""
        r = self._one(query, induced=induced, homomorphism=homomorphism, unique=unique, timeout=timeout,
                      listing=True, limit=limit)
        assert r.rows is not None  # a finished listing holds its rows
        return r.rows


def _token() -> str:
    return uuid.uuid4().hex
