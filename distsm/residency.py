"""What a site keeps on its device, for both executors: the in-process one and each worker of a cluster.

A site is this process (:class:`~distsm.partitioned.PartitionedMatcher`) or one worker's share of a
:class:`~distsm.Matcher` (:class:`~distsm.cluster.worker_site.WorkerSite`).  Both hold a :class:`Residency`: one device
budget, the mode in which their spanning searches read the whole graph's adjacency (:func:`resolve_adjacency`), the
parts their intra-partition joins search (kept while they fit, least recently used out first), and the bytes they
moved and hold.  Both choose the number of parts for a budget by :func:`partitions_for_budget`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from distsm.config import cluster_options
from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.candidate_edges import labelled_runs
from distsm.kernels.gather import HostAdjacency
from distsm.kernels.index import DataIndex, estimate_core_bytes, estimate_index_bytes, memory_mapped
from distsm.plan.results import AdjacencyChoice
from distsm.vocabulary import check_adjacency

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceSplit:
    """How an out-of-core site splits its device budget: the whole graph's O(|V|) arrays come off it first;
    of the rest the join gets half, the cached high-degree rows an eighth, and either the parts being searched
    (at most three eighths) or one gathered piece of adjacency (a quarter) is resident with them."""

    join: int
    parts: int
    gathered: int
    cache: int


def out_of_core_split(budget: int, n: int) -> DeviceSplit:
    """The :class:`DeviceSplit` of ``budget`` device bytes for a data graph of ``n`` vertices."""
    rest = max(budget - estimate_core_bytes(n), 8)
    return DeviceSplit(join=max(rest // 2, 1), parts=max(rest * 3 // 8, 1), gathered=max(rest // 4, 1),
                       cache=rest // 8)


def default_device_budget(backend: Backend) -> int:
    """Device bytes a site may hold when the caller sets no budget: the ``distsm.cluster.device-budget`` option
    when set, else what the backend could give now (:meth:`~distsm.kernels.backend.Backend.available_bytes`)."""
    configured = cluster_options().device_budget
    return configured if configured is not None else backend.available_bytes()


def resolve_adjacency(adjacency: str, budget: int | None, index_bytes: int, n: int) -> str:
    """The adjacency mode a site with ``budget`` device bytes uses for a whole-graph index of ``index_bytes``:
    ``adjacency`` itself unless it is ``"auto"``, which keeps the index on the device when it fits in half the
    budget (the join needs the rest) and reads it from host memory (``"host"``) otherwise.  A budget that cannot
    hold the O(|V|) arrays out-of-core search keeps on the device is refused (None: not known yet, checked when
    a count brings one)."""
    check_adjacency(adjacency)
    if adjacency == "auto":
        adjacency = "device" if budget is None or index_bytes <= budget // 2 else "host"
    core = estimate_core_bytes(n)
    if adjacency != "device" and budget is not None and budget <= core:
        raise ValueError(f"a device budget of {budget} bytes cannot hold the data graph's per-vertex arrays "
                         f"({core} bytes for {n} vertices) that out-of-core search keeps on the device; "
                         f"raise it above {core} bytes")
    return adjacency


def adjacency_reason(asked: str, mode: str, budget: int | None, index_bytes: int) -> str:
    """Why :func:`resolve_adjacency` gave ``mode`` for adjacency ``asked``, a device ``budget`` and a whole-graph
    index of ``index_bytes``, in words."""
    if asked != "auto":
        return f"adjacency {asked!r} was asked for"
    if budget is None:
        return "no device budget: the whole graph's index stays on the device"
    fits = "fits in" if mode == "device" else "is more than"
    return f"the whole graph's index ({index_bytes} bytes) {fits} half the device budget ({budget} bytes)"


def graph_index_bytes(data: Graph) -> int:
    """Estimated bytes of ``data``'s whole-graph index (:func:`~distsm.kernels.index.estimate_index_bytes`)."""
    return estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1)


def partitions_for_budget(data: Graph, budget: int, adjacency: str, build: Callable[[int], Any], *,
                          multiple: int = 1, max_tries: int = 6) -> Any:
    """The partition store (``build(k)``) whose every part fits a site with ``budget`` device bytes.

    When the whole graph's index fits the device (:func:`resolve_adjacency`) one part per ``multiple`` (the
    workers) is enough.  Out of core the whole graph's O(|V|) arrays come off the budget first and every part's
    index must fit in three eighths of the rest (:func:`out_of_core_split`): ``k`` starts at the whole index
    over that share, rounded up to a multiple of ``multiple``, and grows while the partitioner leaves a part too
    large.  A budget that cannot hold the O(|V|) arrays is refused."""
    whole = graph_index_bytes(data)
    if resolve_adjacency(adjacency, budget, whole, data.n) == "device":
        return build(multiple)
    share = out_of_core_split(budget, data.n).parts
    labelled = data.num_effective_labels > 1
    per_edge = 1 if data.directed else 2

    def rounded(k: int) -> int:
        return min(data.n, -(-k // multiple) * multiple)

    k = rounded(max(1, -(-whole // share)))
    for _ in range(max_tries):
        store = build(k)
        st = store.stats
        largest = max(estimate_index_bytes(v, per_edge * e, labelled) for v, e in zip(st.part_vertices, st.part_edges))
        if largest <= share or k >= data.n:
            return store
        k = rounded(max(k + 1, -(-k * largest // share)))
    raise ValueError(f"no partition of {data.n} vertices into parts of at most {share} index bytes was found "
                     f"in {max_tries} tries (last k = {k}); raise the budget")


def resident_bytes(mode: str, index: DataIndex) -> int:
    """Device bytes of the whole graph's index in adjacency ``mode``: all of it on the device, its O(|V|) arrays
    only out of core (the CPU backend's ``"host"`` index is the host index itself, so they are estimated)."""
    if mode == "host":
        return min(int(index.nbytes), estimate_core_bytes(index.n))
    return int(index.nbytes)


class Residency:
    """What one site holds on its device within one budget: the whole graph's adjacency and the parts.

    Args:
        backend: the site's engine backend.
        store: the partition store (:class:`~distsm.partition.PartitionStore`).
        adjacency: ``"auto"``, ``"device"``, ``"host"`` or ``"gather"`` (see :func:`resolve_adjacency`); resolved
            on first use.
        budget: device bytes the site may hold (None: set per count by :meth:`join_budget`).
        site: the site's name, for the log.
        data: the data graph itself where the site has it (this process): on the device its cached index serves
            (a count without partitions reuses it); else the store's memory-mapped files are read.

    The whole graph's index is the store's memory map: on the device a copy of it (``"device"``; on a CPU worker a
    copy in the worker's own memory), out of core read
    in place (``"host"``: page-locked, the pages of one host's processes registered once) or gathered per table
    chunk (``"gather"``, :class:`~distsm.kernels.gather.HostAdjacency`).  On the device every part stays resident
    once loaded; out of core the parts stay while they fit in their share of the budget (:class:`DeviceSplit`), least
    recently used out first.
    """

    def __init__(self, backend: Backend, store: Any, adjacency: str, budget: int | None, *, site: str = "local",
                 data: Graph | None = None):
        check_adjacency(adjacency)
        self.backend = backend
        self.store = store
        self.adjacency = adjacency
        self.budget = budget
        self.site = site
        self._data = data
        self._lock = threading.RLock()  # a worker's task threads share it
        self._parts: OrderedDict[int, tuple[Any, int]] = OrderedDict()
        self._whole: tuple[DataIndex, Any, HostAdjacency | None] | None = None
        self._mapped: DataIndex | None = None
        self.part_bytes_h2d = 0   # out of core: bytes of part indexes loaded onto the device so far
        self.peak_part_bytes = 0  # most bytes of part indexes resident at once
        self.mode = adjacency  # resolved by whole_graph()
        self.mode_reason = ""

    @property
    def out_of_core(self) -> bool:
        self.whole_graph()  # decides the mode
        return self.mode != "device"

    def split(self) -> DeviceSplit:
        assert self.budget is not None  # out of core a budget is known before any part is loaded
        return out_of_core_split(self.budget, int(self.store.assignment.shape[0]))

    def mapped_index(self) -> DataIndex:
        """The whole graph's NumPy index over the store's memory-mapped files (or built, for a store in memory)."""
        with self._lock:
            if self._mapped is None:
                self._mapped = self.store.adjacency_index(mmap=True)
            return self._mapped

    def whole_graph(self) -> tuple[DataIndex, Any, HostAdjacency | None]:
        """``(index, part of every vertex, gathered adjacency or None)``: what spanning searches read.  The first
        call decides the adjacency mode."""
        with self._lock:
            if self._whole is None:
                self._whole = self._build_whole()
            return self._whole

    def _build_whole(self) -> tuple[DataIndex, Any, HostAdjacency | None]:
        n = int(self.store.assignment.shape[0])
        # "auto" weighs the index's real size; a mode the caller named needs no index read to be checked.
        size = int(self.mapped_index().nbytes) if self.adjacency == "auto" else 0
        self.mode = resolve_adjacency(self.adjacency, self.budget, size, n)
        self.mode_reason = adjacency_reason(self.adjacency, self.mode, self.budget, size)
        logger.info("site %s reads the whole graph's adjacency in mode %r (device budget %s)", self.site, self.mode,
                    self.budget)
        assignment = self.store.assignment
        if self.mode == "gather":
            gathered = HostAdjacency(self.backend, self.mapped_index(), limit=1)
            if self.budget is not None:
                self._fit_gathered(gathered)
            return gathered.core, assignment, gathered
        if self.mode == "host":
            return self.backend.host_resident(self.mapped_index(), in_place=True), assignment, None
        if self._data is not None and (self.backend.on_device or self.store.in_memory):
            # The graph's own cached index: what a count without partitions reads too.
            return self.backend.index(self._data), assignment, None
        # On a CPU worker (no graph of its own) its memory is its device: a private copy, as a GPU worker loads its
        # own, where copies fit (private_copies_fit): over the shared file mapping a CPU worker counted slower than a
        # plain process, with a copy about as fast, for reasons not known (in a plain process the mapping and a copy
        # took the same time; measurements in the report).  A process that holds the graph reads the mapping rather
        # than keep a second copy of its index.
        host = self.mapped_index()
        private = (not self.backend.on_device and self._data is None
                   and private_copies_fit(int(host.nbytes), self.backend.available_bytes(), os.cpu_count() or 1))
        return self.backend.from_host(_in_memory(host) if private else host), assignment, None

    def prepare_refinement(self) -> None:
        """Build the (vertex, label) runs refinement reads (:func:`~distsm.kernels.candidate_edges.labelled_runs`)
        of every whole-graph index held in memory, once, at load: else the first heavy query of a site's first batch
        builds them (0.6 s of NumPy on a 4M-edge R-MAT graph), on every worker of a cluster at the same time."""
        index, _, gathered = self.whole_graph()
        if gathered is None and self.mode == "device":
            labelled_runs(self.backend, index)
        host = self.host_index()
        if host is not None:
            labelled_runs(self.backend.host(), host)

    def host_index(self) -> DataIndex | None:
        """The whole graph's index in host memory, for the host side of a GPU site's counts (None on the CPU)."""
        if not self.backend.on_device:
            return None
        if self._data is None or self.out_of_core:
            return self.mapped_index()  # the memory map serves (the graph's own host index would be a second copy)
        return self.backend.host().index(self._data)

    def _fit_gathered(self, gathered: HostAdjacency) -> None:
        split = self.split()
        if gathered.limit != split.gathered:
            gathered.limit = split.gathered
            gathered.set_cache(split.cache)

    def join_budget(self, budget: int, device_budget: int | None = None) -> int:
        """The bytes one join may hold out of ``budget``: all of it on the device; out of core at most the join's
        share (:class:`DeviceSplit`) of the site's device budget.  ``device_budget`` (this process: the count's own
        budget) replaces the site's, and the parts and gathered pieces held are fitted to it."""
        if device_budget is not None:
            gathered = self.whole_graph()[2]  # the mode follows the site's own budget, not one count's
            with self._lock:
                self.budget = device_budget
                if gathered is not None:
                    self._fit_gathered(gathered)
                self._evict(0)
        if not self.out_of_core:
            return budget
        return min(budget, self.split().join)

    def part(self, i: int) -> Any:
        """Part ``i`` with its index resident on the device (loaded on first use; out of core it may be released
        again to make room for another part; a join still running on it keeps its index alive until it ends)."""
        self.whole_graph()  # decides the mode
        with self._lock:
            if i in self._parts:
                self._parts.move_to_end(i)
                return self._parts[i][0]
            local = self.store.part(i)
            # A one-part store's part is the whole graph (ids unchanged): it reads the index the site holds for
            # spanning searches, not a second one built from its edges (at 64M edges, most of a worker's load).
            shared = self.store.k == 1 and self._share_whole(local.graph)
            nbytes = 0 if shared else int(self.backend.index(local.graph).nbytes)
            if self.mode != "device":
                self.part_bytes_h2d += nbytes
                self._evict(nbytes)
            self._parts[i] = (local, nbytes)
            held = sum(b for _, b in self._parts.values())
            self.peak_part_bytes = max(self.peak_part_bytes, held)
            logger.debug("site %s loaded part %d (%d bytes of index, %d held, mode %r)", self.site, i, nbytes, held,
                         self.mode)
            return local

    def _share_whole(self, graph: Graph) -> bool:
        """Register the whole graph's resident index as ``graph``'s on the backend, and its host index as
        ``graph``'s on the host twin, where the whole graph is resident ("device" mode, nothing gathered);
        whether it was."""
        index, _, gathered = self.whole_graph()
        if self.mode != "device" or gathered is not None:
            return False
        self.backend.share_index(graph, index)
        host = self.host_index()
        if host is not None:
            self.backend.host().share_index(graph, host)
        return True

    def _evict(self, incoming: int) -> None:
        """Out of core, release the least recently used parts until ``incoming`` more bytes fit in the parts'
        share of the budget."""
        if self._whole is None or self.mode == "device":
            return
        limit = self.split().parts
        while self._parts and sum(b for _, b in self._parts.values()) + incoming > limit:
            evicted, (old, _) = self._parts.popitem(last=False)
            self.backend.release(old.graph)
            logger.debug("site %s released part %d to make room", self.site, evicted)

    def release(self) -> None:
        """Release every part this site loaded (their device indexes go back to the pool)."""
        with self._lock:
            for local, _ in self._parts.values():
                self.backend.release(local.graph)
            self._parts.clear()

    def choice(self) -> AdjacencyChoice:
        """Where this site reads the whole graph's adjacency, and why (decided by its first read)."""
        self.whole_graph()
        return AdjacencyChoice(self.mode, self.mode_reason)

    def moved_bytes(self) -> int:
        """Bytes copied host to device so far: part indexes out of core, and gathered adjacency."""
        gathered = self.whole_graph()[2]
        return self.part_bytes_h2d + (0 if gathered is None else gathered.stats.bytes_h2d)

    def device_bytes(self) -> int:
        """Peak device bytes as far as the backend knows them: on a device the most its process had in use
        since its matcher started (:meth:`~distsm.kernels.backend.Backend.peak_bytes`); on the CPU the bytes a
        device would hold: the whole graph's resident bytes (:func:`resident_bytes`), the most part indexes held
        at once, and the largest gathered piece with the cached high-degree rows."""
        peak = self.backend.peak_bytes()
        if peak is not None:
            return peak
        index, _, gathered = self.whole_graph()
        pieces = 0 if gathered is None else gathered.stats.peak_piece_bytes + gathered.cache_bytes
        return resident_bytes(self.mode, index) + self.peak_part_bytes + pieces


def private_copies_fit(index_bytes: int, available: int, processes: int) -> bool:
    """Whether CPU workers may each copy a whole-graph index of ``index_bytes`` into their own memory: the copies
    of as many workers as the host has cores (``processes``) fit in ``available`` bytes (half the host's memory).
    Otherwise they share the store's mapping, one copy per host in the page cache: "device" mode takes an index of
    up to a quarter of the host's memory, and a copy of that in every worker would not fit."""
    return index_bytes * max(processes, 1) <= available


def _in_memory(index: DataIndex) -> DataIndex:
    """``index`` with its memory-mapped arrays read into this process's own memory."""
    copies: dict[str, Any] = {f.name: np.array(v) for f in dataclasses.fields(index)
                              if memory_mapped(v := getattr(index, f.name))}
    return dataclasses.replace(index, **copies)


class ResidentSite:
    """What a :class:`~distsm.plan.site.Site` answers from its :class:`Residency`, for both executors (this
    process's :class:`~distsm.partitioned.PartitionedMatcher` and each worker's
    :class:`~distsm.cluster.worker_site.WorkerSite`)."""

    residency: Residency

    @contextmanager
    def part(self, i: int) -> Iterator[Any]:
        """Part ``i`` for its intra-partition search (see :meth:`Residency.part`)."""
        yield self.residency.part(i)

    def whole_graph(self) -> tuple[DataIndex, Any, HostAdjacency | None]:
        return self.residency.whole_graph()

    def host_index(self) -> DataIndex | None:
        return self.residency.host_index()

    def moved_bytes(self) -> int:
        return self.residency.moved_bytes()

    def device_bytes(self) -> int:
        return self.residency.device_bytes()

    def adjacency_choice(self) -> AdjacencyChoice:
        return self.residency.choice()
