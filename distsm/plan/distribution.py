"""How a query spreads over the sites that run it: one decision for both executors.

A query goes ``"whole"`` (one job on one site: a join over the whole graph, see
:func:`~distsm.plan.execute.whole_query_jobs`) or ``"sliced"`` (its inter-partition plan's jobs: every part's
intra-partition join and the spanning searches, spread over the sites).  The in-process executor
(:class:`~distsm.partitioned.PartitionedMatcher`) is one site; a :class:`~distsm.Matcher` has one per worker.  Both
ask :func:`decide`, so the same request gets the same decision, plan strategy and intra/inter breakdown in process
and on a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from distsm.graph import Graph
from distsm.plan.inter import InterPartitionPlan
from distsm.semantics import Semantics
from distsm.arguments import check_choice
from distsm.vocabulary import DISTRIBUTIONS, Distribution, Strategy


@dataclass(frozen=True)
class Sites:
    """What a batch spreads over: ``count`` sites, of which at least one gathers its adjacency per table chunk
    (``gather``: there a whole-graph join cannot take the engine's counting paths, which read the adjacency in
    place)."""

    count: int
    gather: bool = False


@dataclass(frozen=True)
class Directions:
    """What the caller asked of a batch: a forced plan ``strategy`` (a :class:`~distsm.vocabulary.Strategy` or its
    value; None: the cost model's), how to ``distribute`` (``"auto"``, ``"whole"`` or ``"sliced"``), whether it
    lists rows (``listing``) and whether PBE plans share one search among equivalent edges (``share``)."""

    strategy: Strategy | None = None
    distribute: Distribution = "auto"
    listing: bool = False
    share: bool = True

    def __post_init__(self) -> None:
        check_choice("distribute", self.distribute, DISTRIBUTIONS)
        if self.strategy is not None:
            object.__setattr__(self, "strategy", Strategy.parse(self.strategy))


#: No direction: the cost model's plan, spread as :func:`decide` says, counting, shared execution on.
DEFAULT_DIRECTIONS = Directions()


@dataclass(frozen=True)
class Decision:
    """``how`` (``"whole"`` or ``"sliced"``) a query runs and ``why``; ``measured`` when it goes whole to be split
    into slices by its site once its counting plan shows it heavy (then the client neither filters nor plans
    it: heaviness is measured on the site, not guessed)."""

    how: str
    why: str
    measured: bool = False


def measured(query: Graph, sem: Semantics, directions: Directions, sites: Sites) -> bool:
    """Whether ``query`` goes whole to a site that measures its heaviness (:class:`Decision`): a count
    (``distribute="auto"``, no forced PBE) that takes the engine's trial join, on sites reading the adjacency in
    place; induced queries and single vertices have no trial."""
    return (directions.distribute == "auto" and directions.strategy is not Strategy.PBE and not directions.listing
            and not sem.induced and query.n > 1 and not sites.gather)


def decide(query: Graph, sem: Semantics, directions: Directions, sites: Sites) -> Decision | None:
    """The decision for ``query`` that needs no estimate, or None when it depends on the batch's estimated work
    (:func:`by_estimate`)."""
    if measured(query, sem, directions, sites):
        return Decision("whole", "one site" if sites.count == 1 else
                        "sent whole, to be split into slices over the sites if its counting plan shows it heavy",
                        measured=True)
    if directions.distribute != "auto":
        return Decision(directions.distribute, f"distribute={directions.distribute!r} asked by the caller")
    if directions.strategy is Strategy.PBE:
        return Decision("sliced", "the caller forced PBE, whose intra-partition joins run on their parts' sites")
    if sites.count == 1:
        return Decision("whole", "one site")
    return None


def by_estimate(work: float, total: float, queries: int, sites: Sites) -> Decision:
    """The decision for a query of estimated ``work`` in a batch of ``queries`` queries whose estimates sum to
    ``total``, where :func:`decide` left it open.

    A query goes whole to one site when the batch alone keeps every site busy: it has at least as many queries as
    sites and this query's estimate is at most a site's share of the batch (many small queries spread as whole
    queries, with no slicing or merging overhead).  A query heavier than that, or a batch with fewer queries than
    sites, is sliced."""
    share = total / sites.count
    if queries < sites.count:
        return Decision("sliced", f"{queries} queries for {sites.count} sites: slicing keeps every site busy")
    if work > share:
        return Decision("sliced", f"estimated work {work:.3g} exceeds a site's share of the batch ({share:.3g}): "
                                  "one heavy query is spread over the sites")
    return Decision("whole", f"{queries} queries for {sites.count} sites and estimated work {work:.3g} within a "
                             f"site's share of the batch ({share:.3g})")


def whole_plan() -> InterPartitionPlan:
    """The plan of a query whose site measures its heaviness: one join over the whole graph (no spanning searches
    to plan)."""
    return InterPartitionPlan((), False, Strategy.GLOBAL,
                              "sent whole: one join over the whole graph, split into slices over the sites if "
                              "its counting plan shows it heavy")


def shaped(plan: InterPartitionPlan, decision: Decision) -> InterPartitionPlan:
    """The plan a query runs once ``decision`` is taken: ``plan`` itself when sliced (or when its site measures it,
    ``plan`` then being :func:`whole_plan`), else ``plan`` run whole on one site as one global join."""
    if decision.measured or decision.how == "sliced":
        return plan
    return replace(plan, strategy=Strategy.GLOBAL,
                   reason=f"{plan.reason}; sent whole to one site: one join over the whole graph")
