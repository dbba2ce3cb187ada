"""Where each stage of a count runs: the one host-or-device policy.

A device backend (CuPy) has a host twin (NumPy) over the same graph.  Small work costs a device more in launches
and transfers than it saves, so some stages go to the host; :class:`Placement` is the one object that says which,
built once per count from the ``distsm.engine`` options and the backend pair, and asked by every stage:

* the filter runs on the host when the query's label pools are small (``distsm.engine.host-filter-vertices``);
* the trial joins (:meth:`Placement.trials`): on the device, after a first one on the host for queries whose
  refinement would scan little; on the host alone where the device reads its adjacency over the bus;
* the candidate-edge index (:meth:`Placement.index_side`): where it fits the budget, the device first, else its
  host, else nowhere (the general join);
* refinement on the device past ``distsm.engine.device-refine`` scanned entries;
* the core join and trailing count on the host below ``distsm.engine.host-work`` estimated work.

Each choice comes with its reason, which :class:`~distsm.kernels.explain.Explanation` records and the
``distsm.kernels.placement`` logger logs at DEBUG.  A backend without a twin (NumPy) runs every stage itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from distsm.config import EngineOptions, engine_options
from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.budget import MIN_CHUNK_ENTRIES, BudgetPlan, Parts
from distsm.kernels.index import DataIndex

logger = logging.getLogger(__name__)


class Lazy:
    """An int computed on the first call (a measure a stage may never need)."""

    def __init__(self, compute: Callable[[], int]):
        self._compute = compute
        self._value: int | None = None

    @property
    def known(self) -> bool:
        return self._value is not None

    def __call__(self) -> int:
        value = self._value
        if value is None:
            value = self._value = self._compute()
        return value


@dataclass
class Trial:
    """One trial general join: its runner and its allowance of adjacency entries, ``least`` or ``ratio`` times the
    entries refinement would scan (``scan``, measured once) when that is more.  The join adds to ``done`` the share
    of its work it has finished, and sets ``stopped`` when it ends early (:meth:`stops`)."""

    runner: Backend
    least: int
    ratio: float
    scan: Lazy
    stopped: bool = False
    done: float = 0.0

    def allowance(self) -> int:
        return max(self.least, int(self.ratio * self.scan()))

    def passed(self, gathered: int) -> bool:
        """Whether ``gathered`` entries pass the allowance (the scan is measured only once past ``least``)."""
        return gathered > self.least and gathered > self.allowance()

    def stops(self, gathered: int, level: float = 0.0, last: bool = False) -> bool:
        """Whether a join that has read ``gathered`` entries ends here, before a level projected to read ``level``
        more (0: between chunks), the ``last`` level of the join or not.

        It goes on while it stays within its allowance.  Past it, what it has read is spent whichever side counts
        next, so it goes on while what lies ahead is within the allowance (the work the allowance stands for) and
        within twice the allowance in all.  What lies ahead is known before a last level, and projected from the
        share of the work ``done`` once some is; else the join stops.  A join stopped before its last level, or
        after most of its work, costs its own time plus the next side's (HPRD's query_dense_16_160 and _166:
        1.5-1.7x on the GPU machine; design_notes.json)."""
        if not self.passed(gathered + int(level)):
            return False
        ahead = level if last else 0.0
        if self.done > 0:
            ahead = max(ahead, gathered / self.done - gathered)
        elif not last:
            return True
        allowance = self.allowance()
        return ahead > allowance or gathered + ahead > 2 * allowance

    def chunk_entries(self) -> int:
        """Entries per chunk and level: half the allowance, or of ``least`` while the scan is not measured (fine
        enough to stop near it, coarse enough that a device runs few, large launches)."""
        return max((self.allowance() if self.scan.known else self.least) // 2, MIN_CHUNK_ENTRIES)


@dataclass(frozen=True)
class Side:
    """A backend and its index of the data graph."""

    backend: Backend
    index: DataIndex

    @property
    def name(self) -> str:
        return self.backend.name


@dataclass
class Placement:
    """The host-or-device policy of one count (see the module docstring): ``device`` is the backend's side,
    ``host`` its host twin's (the same object when there is none).  ``decisions`` records every choice with its
    reason, in order."""

    device: Side
    host: Side
    options: EngineOptions = field(default_factory=engine_options)
    decisions: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, backend: Backend, data: Graph | DataIndex, host_index: DataIndex | None = None) -> Placement:
        """The placement of a count on ``backend`` over ``data`` (a graph, whose indexes both sides build and
        cache, or a prebuilt index; ``host_index`` is then the host twin's index of the same graph, where the
        twin may take light work and planning)."""
        if isinstance(data, Graph):
            device, host = Side(backend, backend.index(data)), backend.host()
            return cls(device, device if host is backend else Side(host, host.index(data)))
        if host_index is not None and backend.host() is not backend:
            return cls(Side(backend, data), Side(backend.host(), host_index))
        side = Side(backend, data)
        return cls(side, side)

    @property
    def twin(self) -> bool:
        """Whether the backend has a host twin to hand work to."""
        return self.host.backend is not self.device.backend

    def side(self, on_host: bool) -> Side:
        return self.host if on_host else self.device

    def decide(self, stage: str, side: Side, why: str) -> Side:
        """Record (and log) that ``stage`` runs on ``side`` because ``why``."""
        if self.twin:
            note = f"{stage} on {side.name}: {why}"
            self.decisions.append(note)
            logger.debug("%s", note)
        return side

    def filter_side(self, query: Graph) -> Side:
        """Where the filter runs: on the host for a query whose label pools are small (one pass over them costs
        less there than the device's launches and copies), else on the device."""
        if not self.twin:
            return self.device
        pools, limit = pool_vertices(self.host.index, query), self.options.host_filter_vertices
        if pools <= limit:
            return self.decide("filter", self.host, f"{pools} label-pool vertices, at most {limit}")
        return self.decide("filter", self.device, f"{pools} label-pool vertices, over {limit}")

    def trials(self, scan: Lazy, query_vertices: int, candidates: int) -> list[Trial]:
        """The trial general joins, in order.

        The planner's own cost grows with the query, so the least allowance is ``trial-entries`` per query vertex.
        A device backend tries its host first only when refinement would scan no more than that and the filter left
        at most ``trial-host-candidates`` candidates in all (a small query on a small neighbourhood: the device
        would spend more on launches than on the join; past that many candidates the host's trial seldom finishes
        and only delays the device's join).  A device that reads the adjacency over the bus leaves the trial to its
        host, which reads the same memory directly.  The ratios and limits are measured settings
        (benchmarks/README.md, 'Measurements behind the engine's settings')."""
        opts = self.options
        least = opts.trial_entries * query_vertices
        device, host = self.device.backend, self.host.backend
        if not device.on_device or (self.twin and device.adjacency_over_bus(self.device.index)):
            trials = [Trial(host, least, opts.trial_ratio_host, scan)]
        else:
            trials = [Trial(device, least, opts.trial_ratio_device, scan)]
            # The scan is measured first whatever the candidates: the device's trial cuts its chunks to half its
            # allowance once the scan is known, and to half of `least` until then (Trial.chunk_entries); gMatch's
            # light queries read eight times the entries in chunks that small.
            if self.twin and scan() <= least and candidates <= opts.trial_host_candidates:
                trials.insert(0, Trial(host, opts.trial_host_entries * query_vertices, 0.0, scan))
        return [t for t in trials if t.least > 0 or t.ratio > 0]

    def index_side(self, scan: int, budget: BudgetPlan) -> Side | None:
        """Where a candidate-edge index whose build scans ``scan`` entries is built, joined and counted: on the
        device when it fits the budget, else on the host twin when it fits the host's (out of core, where a
        device holds little, this beats the general join reading the adjacency over the bus); None where it fits
        neither."""
        need = budget.index_bytes(scan)
        if budget.index_fits(scan):
            return self.device
        if self.twin and budget.index_fits(scan, on_host=True):
            return self.decide("candidate-edge index", self.host,
                               f"about {need} bytes, over half the device budget ({budget.total}) but within the "
                               f"host's ({budget.host})")
        return None

    def refine_side(self, scan: int, index: Side) -> Side:
        """Refinement reads every candidate's adjacency: past ``device-refine`` entries a device does it faster
        than the host, which then plans over a copy of the result."""
        if not self.twin:
            return self.device
        if index is self.host:
            return self.host
        limit = self.options.device_refine
        if scan > limit:
            return self.decide("refinement", self.device, f"scans {scan} entries, over {limit}")
        return self.decide("refinement", self.host, f"scans {scan} entries, at most {limit}")

    def chunked(self, runner: Side, parts: Parts) -> Parts:
        """``parts`` with the chunks of a core join and trailing count on ``runner`` capped at ``host-chunk-bytes``
        where it is a host: chunks of a few tens of MB stay in the caches, while the budget allows gigabytes (half
        the time of 2 GiB chunks on heavy queries: benchmarks/README.md, 'Measurements behind the engine's settings').
        A device keeps the budget's chunks (fewer, larger launches)."""
        if runner.backend.on_device:
            return parts
        return replace(parts, chunk=self.options.host_chunk_bytes)

    def counts_on_device(self, cost: float, index: Side) -> bool:
        """Whether :meth:`count_side` puts a plan of estimated ``cost`` on a device."""
        if not self.twin:
            return self.device.backend.on_device
        return index is not self.host and cost >= self.options.host_work

    def count_side(self, cost: float, index: Side) -> Side:
        """Plans estimated below ``host-work`` (entries read and written) run on the host even for a device backend:
        below it a device spends more on launches than on the work (benchmarks/README.md, 'Measurements behind the
        engine's settings')."""
        if not self.twin:
            return self.device
        if index is self.host:
            return self.host
        limit = self.options.host_work
        if not self.counts_on_device(cost, index):
            return self.decide("core join and trailing count", self.host,
                               f"estimated work {cost:.3g}, below {limit:.3g}")
        return self.decide("core join and trailing count", self.device,
                           f"estimated work {cost:.3g}, at least {limit:.3g}")


def pool_vertices(idx: DataIndex, query: Graph) -> int:
    """Data vertices the filter tests for ``query``: the sizes of its vertices' label pools."""
    by_label = idx.vertices_by_label
    return sum(int(by_label[lab].shape[0]) for lab in query.vertex_labels.tolist() if lab in by_label)
