"""A count in named stages: *light* (trial joins), *plan* (filter, refine, sample, core and trailing vertices) and
*run* (core join plus trailing count), which callers compose.

In one process a count is ``light() or run(plan())`` (:func:`count`).  A cluster worker runs the same stages: it
takes ``light()``, then ``plan()``, and a plan whose estimated work is heavy is split into slices that each
``run`` one shared plan restricted to their range (:mod:`distsm.plan.execute`).

* :meth:`Count.light` filters the candidates, sends queries whose semantics need it to the general join, and
  otherwise tries the general join under an allowance of adjacency entries (a *trial*; see
  :meth:`~distsm.kernels.placement.Placement.trials`): light queries finish there and never pay for the
  candidate-edge index and the planner.  It returns the count, or None once every trial stopped (past its
  allowance, with more than it ahead: :meth:`~distsm.kernels.placement.Trial.stops`).
* :meth:`Count.plan` refines the candidates into the candidate-edge index, samples walks over it and picks the
  cheapest core and trailing vertices (:mod:`distsm.kernels.count_plan`): a :class:`PlannedCount` with its cost,
  the sides it runs on and why; or, where the index fits no budget, the general join with the reason.
* :meth:`Count.run` joins the core over the candidate edges (optionally restricted to a slice) and counts each
  core match's completions from set sizes (:mod:`distsm.kernels.trailing`).

The allowance of a trial is ``distsm.engine.trial-entries`` per query vertex or, when larger, the adjacency
entries refinement would scan times ``distsm.engine.trial-ratio-host`` (``-device`` for a trial on a device), and a
trial reads at most about twice it, so it never costs much more than the refinement and planning it may save.
Symmetry breaking for unique counts is honoured by the general join or, given ``|Aut(Q)|``, by counting every
embedding and dividing.  Every stage records what it did in an :class:`~distsm.kernels.explain.Explanation` when
one is given, and logs its decisions on the ``distsm.kernels.counting`` logger at DEBUG.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from distsm.graph import Graph
from distsm.kernels import candidate_edges, dfs, refinement
from distsm.kernels.vertex_sets import restricted
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan, Parts
from distsm.kernels.ce_join import CoreOrder, walk_core
from distsm.kernels.dfs import Breaking
from distsm.kernels.count_plan import CountPlan, host_scale, plan_count, sampling_allowance
from distsm.kernels.engine import Control, Watch, check_pair, prepare, walk
from distsm.kernels.explain import Explanation
from distsm.kernels.index import DataIndex
from distsm.kernels.placement import Lazy, Placement, Side, Trial
from distsm.kernels.query_plan import Allowed, Constraints, MatchOptions
from distsm.kernels.sampling import Sampler
from distsm.kernels.trailing import TrailingCounter

logger = logging.getLogger(__name__)

COUNT_PATHS = ("auto", "general", "trailing", "dfs")


@dataclass(frozen=True)
class Symmetry:
    """How a unique count breaks the query's symmetry: ``less_than`` constraints for the general join, and
    ``automorphisms`` (``|Aut(Q)|``) where the count may instead count every embedding and divide (a slice of a
    count may not: its embeddings do not come in whole orbits).

    ``breaking`` (unique and plain counts alike) breaks the symmetry of the query renumbered in a depth-first
    search's order (:mod:`distsm.kernels.dfs`), which counts each subgraph once and, unless ``unique``, multiplies
    by ``|Aut(Q)|``; without it a count never takes that search."""

    less_than: tuple[tuple[int, int], ...] = ()
    automorphisms: int | None = None
    breaking: Breaking | None = None
    unique: bool = False


@dataclass(frozen=True)
class Target:
    """What a count counts: ``query`` under ``options`` and ``symmetry``, its images restricted by ``restrict``
    (query vertex -> allowed data vertices; None: unrestricted)."""

    query: Graph
    options: MatchOptions
    symmetry: Symmetry = Symmetry()
    restrict: Mapping[int, Allowed] | None = None


@dataclass(frozen=True)
class PlannedCount:
    """What :meth:`Count.plan` decided.

    With a ``plan`` (:class:`~distsm.kernels.count_plan.CountPlan`): the candidate-edge index ``ce`` held by
    ``runner``'s side, ``parts`` of the budget left for the join and the count, the refined candidate sizes and
    the side that refined.  Without one, ``refined`` empty means refinement proved there is no match, and
    otherwise the count takes the general join.  ``reason`` says why.
    """

    reason: str
    plan: CountPlan | None = None
    runner: Side | None = None
    ce: Any = None
    parts: Parts | None = None
    refined: tuple[int, ...] = ()
    refiner: str = ""
    passes: int = 0

    @property
    def general(self) -> bool:
        return self.plan is None and not self.empty

    @property
    def empty(self) -> bool:
        return self.plan is None and self.reason == NO_MATCH_AFTER_REFINEMENT

    @property
    def cost(self) -> float:
        """Estimated work (entries read and written); 0 without a plan."""
        return 0.0 if self.plan is None else float(self.plan.cost)

    @property
    def host_cost(self) -> float:
        """:attr:`cost` in NumPy's terms (:func:`~distsm.kernels.count_plan.host_scale`): divided by the device's
        speed-up where the plan runs on a device, which does that work that much faster."""
        return host_scale(self.cost, self.runner is not None and self.runner.backend.on_device)

    def covers(self, vertices: Mapping[int, Any]) -> bool:
        """Whether a run restricted on ``vertices`` can use this plan (they must be core vertices)."""
        return self.plan is not None and set(vertices) <= set(self.plan.core)


NO_MATCH_AFTER_REFINEMENT = "refinement left a query vertex without candidates"


class Count:
    """The stages of one count of ``target`` (see the module docstring) under ``budget`` on ``placement``.

    ``candidates`` is the unrestricted filter's output from an earlier count of the same query on the same
    placement (the slices of one count filter once); ``control`` cancels between chunks; ``explain`` records.
    """

    def __init__(self, placement: Placement, target: Target, budget: int | BudgetPlan, *,
                 control: Control | None = None, explain: Explanation | None = None,
                 candidates: list[Any] | None = None):
        self.placement, self.target = placement, target
        self.budget = BudgetPlan.of(budget)
        self.control, self.explain = control, explain
        self.clock = _Clock(placement.device.backend, explain)
        self.filter_side = placement.filter_side(target.query)
        self._unrestricted = candidates
        self._candidates: list[Any] | None = None
        self._scan: Lazy | None = None
        self._search: dfs.Search | bool | None = None  # False: no search (kept)

    def total(self, path: str = "auto") -> int:
        """The count, in process: ``light() or run(plan())``; ``path`` forces ``"general"`` or ``"trailing"`` (where
        the semantics allow it; no trial)."""
        found = self.light(path)
        if found is not None:
            return found
        return self.run(self.plan(force=path == "trailing"))

    @property
    def scan(self) -> Lazy:
        """Adjacency entries refinement would scan, measured on first call.  Its closure holds the candidates, not
        this object: a cycle would keep a count's device arrays alive until the garbage collector's next pass."""
        if self._scan is None:
            self._scan = Lazy(partial(candidate_edges.scan_entries, self.filter_side.backend,
                                      self.filter_side.index, self.candidates(), self.target.query))
        return self._scan

    # ------------------------------------------------------------------ filter
    def unrestricted(self) -> list[Any]:
        """The filter's candidates of every query vertex, ignoring ``target.restrict`` (shareable)."""
        if self._unrestricted is None:
            side, query = self.filter_side, self.target.query
            self._unrestricted = side.backend.candidates(side.index, query,
                                                         homomorphism=self.target.options.homomorphism)
        return self._unrestricted

    def candidates(self) -> list[Any]:
        """The filter's candidates with ``target.restrict`` applied, held by the filter's side."""
        if self._candidates is None:
            restrict, side = self.target.restrict or {}, self.filter_side
            if restrict and self._unrestricted is None:
                cands = side.backend.candidates(side.index, self.target.query,
                                                homomorphism=self.target.options.homomorphism, restrict=restrict)
            else:
                cands = [c if u not in restrict else restricted(side.backend.xp, c, restrict[u])
                         for u, c in enumerate(self.unrestricted())]
            self._candidates = cands
            self.clock.lap("filter")
            if self.explain is not None:
                self.explain.candidates = [int(c.shape[0]) for c in cands]
        return self._candidates

    # ------------------------------------------------------------------ light
    def light(self, path: str = "auto", *, trials: bool = True) -> int | None:
        """The count when it is light: no candidate for some vertex (0), semantics that need the general join
        (or ``path="general"``), or a trial join that finished (``path="auto"`` with ``trials``).  None when the
        count needs :meth:`plan` and :meth:`run`."""
        if path not in COUNT_PATHS:
            raise ValueError(f"path must be one of {', '.join(map(repr, COUNT_PATHS))}, got {path!r}")
        # A search chosen unasked goes first: it needs candidates only to sample its selectivity, once per graph and
        # query (and a sample finds no selectivity where a vertex has no candidate).  A forced one runs after the
        # filter, which answers 0 where the query has a label, or edge label, that the data graph lacks.
        if path == "auto":
            search = self.search()
            if search is not None:
                return self.run_search(search)
        sizes = [c.shape[0] for c in self.candidates()]
        if not min(sizes):
            return self._explained(0, "a query vertex has no candidate", "filter")
        if path == "dfs":
            search = self.search(force=True)
            assert search is not None  # a forced search raises where it cannot count
            return self.run_search(search)
        reason = "forced" if path == "general" else self._general_reason()
        if reason:
            return self.general(reason)
        if path != "auto" or not trials:
            return None
        for trial in self.placement.trials(self.scan, self.target.query.n, int(sum(sizes))):
            total = self._join(trial.runner, trial)
            if total is not None:
                if self.explain is None:
                    return total  # a light query's reason would measure the scan it never needed
                return self._explained(total, f"the general join finished in its trial on {trial.runner.name} "
                                              f"(allowance {trial.allowance()} entries; refinement would scan "
                                              f"{self.scan()})")
        logger.debug("trial joins of a %d-vertex query stopped past their allowances", self.target.query.n)
        return None

    def search(self, force: bool = False) -> dfs.Search | None:
        """The depth-first set-intersection search this count takes (:mod:`distsm.kernels.dfs`): where it applies
        and the measured selectivity reaches ``distsm.engine.dfs-selectivity`` on a device backend (on the host too
        with ``distsm.engine.dfs-host``), or ``force``; else None.  Chosen once per count."""
        if self._search is None or (force and not self._search):
            self._search = self._choose_search(force) or False
        return self._search if isinstance(self._search, dfs.Search) else None

    def _choose_search(self, force: bool) -> dfs.Search | None:
        target, device, opts = self.target, self.placement.device, self.placement.options
        if not force and self._search_unlikely():
            return None
        why = dfs.unsupported(target.query, target.options, device.index, bool(target.restrict),
                              target.symmetry.breaking, self.budget.total)
        if why:
            if force:
                raise ValueError(f"the depth-first search cannot count this query: {why}")
            return None
        selectivity = None  # a forced search (a slice of a cut one, say) samples nothing
        if not force:
            side = self.filter_side
            selectivity = dfs.measured_selectivity(side.backend, side.index, self.candidates, target.query)
            if selectivity < opts.dfs_selectivity:
                return None
        assert target.symmetry.breaking is not None  # unsupported() said why otherwise
        return dfs.choose(target.query, device.index, target.symmetry.breaking, target.symmetry.unique, selectivity)

    def _search_unlikely(self) -> bool:
        """Whether a search chosen unasked is ruled out by the query's shape and labels alone (checked before what
        the search needs, which every light query would pay for otherwise)."""
        target, device, opts = self.target, self.placement.device, self.placement.options
        # The host's search (kernels/dfs_host.py) lays each level out as a table: it checks the device kernel and
        # is no faster than the joins on a CPU (a 5-path on a 300-vertex random graph: 3.7 s against 0.18 s by
        # trailing counts), so only a device backend takes the search unasked, unless asked.  A shortcut's closed
        # form enumerates no tables past wedges and triangles and is taken on the host too (NumPy, a 20K-edge
        # R-MAT graph: a 4-cycle 0.03 s against 10.8 s by the joins, a 5-path 0.21 s against 11.3 s).
        if not device.backend.on_device and not opts.dfs_host and dfs.shortcut_of(target.query, device.index) is None:
            return True
        # Labels whose vertices are a small share of the graph seldom give arcs that keep the threshold's share of
        # entries: such queries (HPRD's, gMatch's) are sent on without a sample, which costs device launches.
        if dfs.label_share(device.index, target.query) < opts.dfs_selectivity / 2:
            return True
        # Leaves past the pair tail's two are enumerated by the search but counted from set sizes by the joins'
        # trailing count (a 4-star on a 300-vertex random graph, NumPy: 0.71 s searched, 0.038 s by the joins).
        return dfs.leaves(target.query) > 2

    def search_share(self, split_work: float, pieces: int) -> dfs.SearchShare | None:
        """The search cut into task ranges for a cluster, one per ``split_work`` of its estimated work
        (:func:`~distsm.kernels.dfs.task_work`, whose units compare with the plans' host work) and at most
        ``pieces``, where this count takes the search (:meth:`search`) and that work is at least ``split_work``;
        else None."""
        search = self.search()
        if search is None:
            return None
        device = self.placement.device
        ranges, work = dfs.cuts(device.backend, device.index, search, split_work, pieces)
        if work < split_work or len(ranges) < 2:
            return None
        return dfs.SearchShare(ranges, work, f"its depth-first search's estimated work {work:.3g} is at least "
                                             f"{split_work:.3g}: cut into {len(ranges)} ranges of its tasks")

    def run_search(self, search: dfs.Search, tasks: tuple[int, int] | None = None) -> int:
        """The count by ``search`` (of its ``tasks`` only, a slice of a :class:`~distsm.kernels.dfs.SearchShare`)."""
        device = self.placement.device
        total = dfs.count(device.backend, device.index, search, self.budget.total, self.control, tasks)
        self.clock.lap("depth-first search")
        if self.explain is not None:
            self.explain.path, self.explain.order = "dfs", search.order
        how = "each subgraph once" if search.unique else f"each subgraph once, times |Aut| ({search.automorphisms})"
        if search.shortcut is not None:
            how += f", {search.shortcut}"
        part = "" if tasks is None else f", tasks {tasks[0]}-{tasks[1]}"
        why = "forced" if search.selectivity is None else \
            f"measured arc selectivity {search.selectivity:.3g}, at least {self.placement.options.dfs_selectivity:g}"
        return self._explained(total, f"depth-first set-intersection search on {device.name} ({how}{part}; {why})")

    def _general_reason(self) -> str:
        """Why the semantics send a count to the general join ("" when the trailing-count path applies)."""
        query, sym = self.target.query, self.target.symmetry
        if query.n < 2:
            return "a single query vertex: its candidates are the matches"
        if self.target.options.induced:
            return "induced: trailing vertices would need non-edge checks among themselves"
        if sym.less_than and not sym.automorphisms:
            return "symmetry breaking without the automorphism count"
        return ""

    def general(self, reason: str) -> int:
        """The general join's count on the device side without allowance, explained by ``reason``."""
        total = self._join(self.placement.device.backend, None)
        assert total is not None  # only an allowance stops a join
        return self._explained(total, reason)

    def _join(self, runner: Backend, trial: Trial | None) -> int | None:
        """The general join's count on ``runner``; as a ``trial``, None once it has read more than about its
        allowance (its chunks are cut to the allowance, so a stopped trial has read at most a few of them)."""
        side = self.placement.side(runner is not self.placement.device.backend)
        query, sym = self.target.query, self.target.symmetry
        prepared = prepare(runner, side.index, query, self.target.options, constraints=Constraints(sym.less_than),
                           candidates=_on(side, self.filter_side.backend, self.candidates()))
        assert prepared is not None  # every query vertex has candidates
        stats: dict[str, int] = {}
        budget = self.budget if trial is None else self.budget.trial(trial.chunk_entries(), query.n)
        counted = self.explain is not None or trial is not None
        total = sum(int(c) for c in walk(runner, prepared, budget, True,
                                         watch=Watch(stats if counted else None, self.control, trial)))
        if trial is not None and trial.stopped:
            self.clock.lap("trial join")
            if self.explain is not None:
                self.explain.trials.append((runner.name, trial.allowance(), stats.get("gathered", 0)))
            return None
        self.clock.lap("join")
        if self.explain is not None:
            self.explain.path, self.explain.order = "general", prepared.plan.order
            self.explain.join_runner, self.explain.join_entries = runner.name, stats.get("gathered", 0)
            self.explain.actual = [stats.get(f"level{i}") for i in range(query.n)]
        return total

    # ------------------------------------------------------------------ plan
    def plan(self, *, start: int | None = None, trailing: frozenset[int] | None = None,
             force: bool = False) -> PlannedCount:
        """Refine the candidates into the candidate-edge index and plan the core join and trailing count over it
        (``start``: the core's first vertex; ``trailing``: force the trailing vertices).  An index that fits no
        budget sends the count to the general join, unless ``force``."""
        scan = self.scan()
        index = self.placement.index_side(scan, self.budget)
        if index is None:
            if not force:
                return PlannedCount(f"the candidate-edge index would need about {self.budget.index_bytes(scan)} "
                                    f"bytes to build, over half the budget ({self.budget.total})")
            index = self.placement.device
        on_host_only = self.placement.twin and index is self.placement.host
        refiner = self.placement.refine_side(scan, index)
        built = refinement.build(refiner.backend, refiner.index, self.target.query,
                                      _on(refiner, self.filter_side.backend, self.candidates()),
                                      lookup_bytes=self.budget.lookups(on_host_only))
        host = self.placement.host
        on_host = built if refiner is host else built.to(refiner.backend.to_host)
        self.clock.lap("refine")
        refined = tuple(int(c.shape[0]) for c in on_host.candidates)
        if min(refined) == 0:
            return PlannedCount(NO_MATCH_AFTER_REFINEMENT, refiner=refiner.name)
        # The index and the candidates stay resident: the join and the count share what is left of the budget.
        parts = self.budget.after_index(on_host.nbytes, on_host_only)
        opts = self.placement.options
        sampler = Sampler(host.backend, self.target.query, on_host, homomorphism=self.target.options.homomorphism,
                          walks=min(parts.walks, opts.plan_walks), control=self.control)
        plan = plan_count(self.target.query, sampler, list(refined), self.target.options.homomorphism, trailing,
                          start, lambda cost: sampling_allowance(cost, self.placement.counts_on_device(cost, index),
                                                                 opts.plan_share_device))
        runner = self.placement.count_side(plan.cost, index)
        parts = self.placement.chunked(runner, parts)
        self.clock.lap("plan")
        if self.explain is not None:
            self.explain.candidate_edges = sum(a.edges for a in on_host.arcs.values())
        ce = on_host if runner is host else built
        if runner is not host and refiner is not runner:
            ce = on_host.only(plan.arcs).to_all(runner.backend.upload)
            self.clock.lap("upload")
        logger.debug("planned a core of %d and %d trailing vertices, estimated work %.3g, on %s",
                     len(plan.core), len(plan.trailing), plan.cost, runner.name)
        return PlannedCount(f"core of {len(plan.core)} joined over candidate edges, {len(plan.trailing)} trailing "
                            f"vertices counted from set sizes, on {runner.name} (estimated work {plan.cost:.3g} by "
                            f"{plan.walks} walks; refined on {refiner.name})", plan, runner, ce, parts, refined,
                            refiner.name, ce.passes)

    # ------------------------------------------------------------------ run
    def run(self, planned: PlannedCount, allowed: Mapping[int, Allowed] | None = None) -> int:
        """The count under ``planned`` (see :class:`PlannedCount`); ``allowed`` restricts the core join's images
        (a slice running a plan shared with other slices)."""
        if planned.empty:
            return self._explained(0, planned.reason, "filter")
        if planned.plan is None:
            return self.general(planned.reason)
        assert planned.runner is not None and planned.parts is not None  # a plan comes with its sides
        plan, runner, ce, parts = planned.plan, planned.runner.backend, planned.ce, planned.parts
        counter = TrailingCounter(runner, plan, ce, homomorphism=self.target.options.homomorphism,
                                  budget=parts.trailing)
        level_rows = [0] * len(plan.core)
        total = 0
        # The core's last level is extended inside the trailing count (on a device as (row, vertex) pairs that are
        # never copied into rows), unless a slice restricts its images.
        extend = bool(plan.steps) and plan.core[-1] not in (allowed or {})
        steps = list(plan.steps[:-1] if extend else plan.steps)
        for table in walk_core(runner, ce, CoreOrder(plan.core[0], steps), parts.core,
                               not self.target.options.homomorphism, self.control, level_rows, allowed=allowed):
            self.clock.lap("core join")
            total += counter.count(table, self.control, extend)
            self.clock.lap("trailing count")
        if extend:
            level_rows[-1] = counter.extended_rows
        sym = self.target.symmetry
        if sym.less_than:
            assert sym.automorphisms  # _general_reason sends symmetry breaking without |Aut(Q)| to the join
            total //= sym.automorphisms
        why = planned.reason
        if sym.less_than:
            why += f"; unique = embeddings / |Aut| ({sym.automorphisms})"
        if self.explain is not None:
            self.explain.path, self.explain.order = "trailing", plan.order
            self.explain.trailing = tuple(t.vertex for t in plan.trailing)
            self.explain.estimated = list(plan.level_estimates)
            self.explain.actual = list(level_rows)
            self.explain.refined_candidates = list(planned.refined)
            self.explain.refine_passes = planned.passes
            self.explain.trailing_entries, self.explain.trailing_words = counter.entries, counter.words
            self.explain.plans_tried = plan.plans_tried
        return self._explained(total, why)

    def _explained(self, total: int, reason: str, path: str | None = None) -> int:
        if self.explain is not None:
            self.explain.count, self.explain.reason = total, reason
            self.explain.path = path or self.explain.path
            self.explain.placement = list(self.placement.decisions)
        return total


def count(backend: Backend, data: Graph | DataIndex, target: Target, *, budget: int | BudgetPlan,
          control: Control | None = None, explain: Explanation | None = None, path: str = "auto") -> int:
    """Number of matches of ``target`` (a Python int): ``light() or run(plan())`` (see the module docstring).

    ``data`` is a graph (both sides of the placement index it) or a prebuilt index (no host twin).
    ``explain`` is filled in with the path taken, the trials, the order, estimated and actual partial matches per
    level, the placement's decisions and the time per stage.  ``path`` forces ``"general"``, ``"trailing"`` or
    ``"dfs"`` (where the semantics allow it; no trial) instead of the ``"auto"`` choice.
    """
    if isinstance(data, Graph):
        check_pair(data, target.query)
    return Count(Placement.of(backend, data), target, budget, control=control, explain=explain).total(path)


def _on(runner: Side, holder: Backend, arrays: Sequence[Any]) -> Sequence[Any]:
    """``arrays`` (vertex ids held by ``holder``'s memory) where ``runner`` reads them, in ``runner``'s vertex
    dtype (the host's candidates are int64, a device's int32: its kernels take them as they are); a device gets
    them as one upload with their bitsets (see ``upload_candidates``)."""
    backend = runner.backend
    if backend is holder:
        return arrays
    if backend.on_device:
        return backend.upload_candidates(runner.index, [holder.to_host(a) for a in arrays])
    return [holder.to_host(a) for a in arrays]


class _Clock:
    """Stage timings for an :class:`Explanation` (the backend synchronises so device work is counted)."""

    def __init__(self, backend: Backend, explain: Explanation | None):
        self.backend, self.explain = backend, explain
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        if self.explain is None:
            return
        self.backend.synchronize()
        now = time.perf_counter()
        self.explain.seconds[stage] = self.explain.seconds.get(stage, 0.0) + now - self.t
        self.t = now
