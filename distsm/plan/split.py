"""Splitting a heavy count into slices that share its plan.

A worker that finds a whole query heavy (its counting plan estimated at ``distsm.cluster.split-work`` or more) has
already refined the query's candidates into the candidate-edge index and planned the core join and trailing
count.  A :class:`SharedPlan` is that index (on the host) and plan; a slice of the count restricts the images of
the core's first vertex, and for a start vertex heavier than a slice's share those of its second, to id ranges,
and runs the same plan over the same index (:meth:`~distsm.kernels.counting.Count.run` with ``allowed``).  The
slices together do the whole count's work: no worker filters, refines or plans the query again, and no slice
falls back to the general join.

Slices are balanced by walks sampled along the plan's core order (:meth:`~distsm.kernels.sampling.Sampler.walk`):
they spread about uniformly over the core's complete matches, so the walks rooted at a start vertex (and, within
it, passing through a second vertex) estimate its share of the core join and of the trailing count that follows
every core match.  The static estimate the client can make (candidate edges of unrefined start vertices) left
one slice of 16 with 65% of a 12-vertex query's work; see :func:`slices`.

A unique count's slices count embeddings: a slice's embeddings do not come in whole automorphism orbits, so it can
neither divide by ``|Aut(Q)|`` nor break symmetry without leaving the trailing count; the query's merge divides
their sum instead (:attr:`SharedPlan.automorphisms`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.candidate_edges import CandidateEdges
from distsm.kernels.count_plan import CountPlan, host_scale
from distsm.kernels.counting import Count, PlannedCount, Symmetry, Target
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement, Side
from distsm.kernels.ce_join import run_lengths
from distsm.kernels.sampling import Sampler, set_work
from distsm.plan.slices import balanced_starts
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork

#: Walks sampled per slice wanted (at least :data:`MIN_WALKS`): enough that a slice's share is estimated from
#: hundreds of walks.
WALKS_PER_SLICE = 512
MIN_WALKS = 4096
#: Share of the walks' weight spread evenly over the start vertices, so that a vertex no walk reached still weighs
#: something (its work is small, not nothing).
EVEN_SHARE = 0.05


@dataclass(frozen=True)
class SharedPlan:
    """A heavy count's plan and candidate-edge index, shipped to the workers that run its slices.

    ``ce`` holds host (NumPy) arrays without the lookups (position maps where ``maps``, and the bit matrices of
    ``matrix_arcs``), which :meth:`index` builds again where the slices run; ``on_device`` says whether the
    planning worker ran the core join and trailing count on its device side (a worker running a slice does the
    same); ``refined`` are the refined candidate sizes and ``reason`` the planner's.  ``automorphisms`` is
    ``|Aut(Q)|`` for a unique count, whose slices count embeddings and whose merge divides their sum by it (None
    otherwise).  ``token`` names the plan: a worker keeps
    one device copy of the index per token, whatever number of its slices it runs."""

    plan: CountPlan
    ce: CandidateEdges
    maps: bool
    matrix_arcs: tuple[tuple[int, int, int], ...]
    on_device: bool
    refined: tuple[int, ...]
    reason: str
    automorphisms: int | None
    token: str

    @classmethod
    def of(cls, planned: PlannedCount, placement: Placement, automorphisms: int | None) -> SharedPlan:
        """The shareable part of ``planned`` (a plan that :meth:`~distsm.kernels.counting.Count.plan` made on
        ``placement``)."""
        assert planned.plan is not None and planned.runner is not None  # only a plan is shared
        runner = planned.runner
        shipped, matrix_arcs = planned.ce.without_lookups()
        if runner.backend.on_device:
            shipped = shipped.to(runner.backend.to_host)
        return cls(planned.plan, shipped, planned.ce.positions is not None, matrix_arcs,
                   runner is placement.device and placement.device.backend.on_device, planned.refined,
                   planned.reason, automorphisms, uuid.uuid4().hex)

    def runner(self, placement: Placement) -> Side:
        """The side of ``placement`` a slice runs on: where the planning worker ran the count."""
        return placement.device if self.on_device else placement.host

    def index(self, backend: Backend) -> CandidateEdges:
        """The candidate-edge index, lookups included, in ``backend``'s memory."""
        ce = self.ce if not backend.on_device else self.ce.to_all(backend.upload)
        return ce.with_lookups(backend.xp, self.matrix_arcs, self.maps)

    @property
    def host_cost(self) -> float:
        """The plan's estimated work on NumPy's scale (a device's work divided by its speed-up, as
        :attr:`~distsm.kernels.counting.PlannedCount.host_cost`)."""
        return host_scale(self.plan.cost, self.on_device)

    @property
    def anchor(self) -> int:
        """The query vertex whose images the slices split: the core's first."""
        return self.plan.core[0]


class Cut(NamedTuple):
    """One slice of a split count: the images it allows (query vertex -> a range of data ids) and its estimated
    share of the count's work (the cuts' shares add up to 1)."""

    restrict: dict[int, range]
    share: float


def slices(shared: SharedPlan, host: Backend, query: Graph, sem: Semantics, pieces: int) -> list[Cut]:
    """About ``pieces`` :class:`Cut` s that split ``shared``'s count into disjoint slices covering it, balanced by
    walks sampled along the core order (``host``, the NumPy backend, runs them): ranges of the core's first vertex's
    images, and where one image carries more than a slice's share of the walks, ranges of the next core vertex's
    images among its walks, and so on down the core (a skewed graph's hub may carry a third of a count's work
    through one second vertex).  Each cut's share is its walks' weight: what a scheduler needs to start the
    largest slices first."""
    plan, ce = shared.plan, shared.ce
    walks = Sampler(host, query, ce, homomorphism=sem.homomorphism,
                    walks=max(WALKS_PER_SLICE * pieces, MIN_WALKS)).walk(plan.core[0], list(plan.steps))
    whole = [Cut({plan.core[0]: range(0, ce.n)}, 1.0)]
    if walks is None or pieces < 2:
        return whole
    cost = _trailing_work(host, ce, plan, walks)
    walks = np.asarray(walks, np.int64)
    ids = np.asarray(ce.candidates[plan.core[0]], np.int64)
    # Every start vertex weighs a little: one no walk reached still has some work.
    first = np.bincount(np.searchsorted(ids, walks[:, 0]), cost, minlength=ids.shape[0]) + \
        EVEN_SHARE * cost.sum() / ids.shape[0]
    total = float(first.sum())
    share = total / pieces
    out: list[Cut] = []

    def split(rows: np.ndarray, depth: int, restrict: dict[int, range], scale: float) -> None:
        if depth == 0:
            values, weights = ids, first
        else:
            values, where = np.unique(walks[rows, depth], return_inverse=True)
            walked = np.bincount(where, cost[rows], minlength=values.shape[0]).astype(np.float64)
            # A heavy image's walks weigh what the image did one level up (its even share included).
            weights = walked * (scale / max(float(walked.sum()), 1e-300))
        for ids_range, heavy, weight in _ranges(values, weights, share, ce.n):
            narrowed = {**restrict, plan.core[depth]: ids_range}
            if heavy is not None and depth + 1 < len(plan.core):
                split(rows[walks[rows, depth] == heavy], depth + 1, narrowed, weight)
            else:
                out.append(Cut(narrowed, weight / total))

    split(np.arange(walks.shape[0]), 0, {}, total)
    return out


def _trailing_work(host: Backend, ce: CandidateEdges, plan: CountPlan, walks: Any) -> np.ndarray:
    """The work each walk (a complete core match) stands for: one for its row, plus what counting its trailing
    vertices reads (:func:`~distsm.kernels.sampling.set_work` per row).  A dense query's core rows differ by
    orders of magnitude in this."""
    work = np.ones(walks.shape[0])
    for ext in plan.trailing:
        run = 0 if len(ext.links) == 1 else np.asarray(run_lengths(host.xp, ce, walks, *ext.links[0])[1], np.float64)
        work += set_work(len(ext.links), run)
    return work


def _ranges(values: np.ndarray, weights: np.ndarray, share: float, n: int
            ) -> list[tuple[range, int | None, float]]:
    """Contiguous id ranges covering ``0..n-1`` that hold ``values`` (sorted ids, weighing ``weights``) in runs of
    about ``share``, each with its one value where that value alone weighs more than ``share`` (else None), and
    the weight it holds."""
    heavy = np.flatnonzero(weights > share)
    runs = max(int(np.ceil(float(weights.sum()) / share)), 1)
    begins = np.unique(np.concatenate([balanced_starts(weights, runs), heavy, heavy + 1]))
    begins = begins[begins < values.shape[0]]
    bounds = [*begins.tolist(), values.shape[0]]
    cuts = [0, *values[begins[1:]].tolist(), n]
    return [(range(cuts[i], cuts[i + 1]),
             int(values[a]) if b - a == 1 and weights[a] > share else None,
             float(weights[a:b].sum()))
            for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


def count_slice(placement: Placement, shared: SharedPlan, ce: CandidateEdges, work: QueryWork,
                restrict: Mapping[int, range], explain: Explanation | None = None) -> int:
    """The matches of ``work`` (``shared``'s count) whose images lie in ``restrict`` (embeddings for a unique count:
    see :class:`SharedPlan`), run on ``placement`` over ``ce`` (``shared``'s :meth:`~SharedPlan.index` where the
    count runs: on the device side when ``shared.on_device``); ``explain`` receives its stages' seconds."""
    query, sem, budget = work.query, work.sem, BudgetPlan.of(work.budget)
    side = shared.runner(placement)
    parts = placement.chunked(side, budget.after_index(ce.nbytes, on_host=placement.twin and side is placement.host))
    planned = PlannedCount(shared.reason, shared.plan, side, ce, parts, shared.refined)
    stages = Count(placement, Target(query, sem.match_options, Symmetry(), restrict), budget, control=work.control,
                   explain=explain)
    return stages.run(planned, allowed=restrict)
