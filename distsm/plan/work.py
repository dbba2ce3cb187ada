"""One query as a job runs it: the arguments every job function of :mod:`distsm.plan` takes together, passed down
as one value."""

from __future__ import annotations

from dataclasses import dataclass

from distsm.graph import Graph
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.records import Control
from distsm.semantics import Semantics


@dataclass(frozen=True)
class QueryWork:
    """``query`` (in the data graph's label codes) under ``sem``, within ``budget`` bytes (or its
    :class:`~distsm.kernels.budget.BudgetPlan`), steered by the caller's ``control`` (cancellation and progress;
    None: none)."""

    query: Graph
    sem: Semantics
    budget: int | BudgetPlan
    control: Control | None = None
