"""A query filtered and planned against one data graph: what the join driver (:func:`~distsm.kernels.engine.walk`)
and a backend's batched count (:meth:`~distsm.kernels.backend.Backend.count_prepared`) take.  It sits below the
backend interface, so that the interface and its implementations import it downwards."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from distsm.kernels.candidate_sets import CandidateSets
from distsm.kernels.index import DataIndex
from distsm.kernels.query_plan import QueryPlan


@dataclass
class PreparedQuery:
    """A query filtered and planned against one data graph.

    ``bits`` holds each query vertex's candidate set as the backend's membership tests read it (None for the
    first vertex of the order, whose candidates start the join): the filter's own rows where ``candidates`` (a
    :class:`~distsm.kernels.candidate_sets.CandidateSets`) carries them, else built by ``bitset`` on first use: a
    batch of queries counted together on the NumPy backend (:mod:`distsm.kernels.batch`) reads sorted candidate
    keys instead, and never pays a set over the data vertices per query vertex.  ``bitsets`` are the sets once
    built (or given).  ``vertex_labels`` are the query's (empty where unknown): a join that reads runs split by
    the neighbours' vertex labels (:mod:`distsm.kernels.split_runs`) numbers each step's runs by them.
    """

    index: DataIndex
    plan: QueryPlan
    candidates: Sequence[Any]
    bitset: Callable[[Any], Any]
    bitsets: list[Any] | None = field(default=None, repr=False)
    vertex_labels: tuple[int, ...] = ()

    @property
    def bits(self) -> list[Any]:
        if self.bitsets is None:
            first = self.plan.order[0]
            sets = self.candidates
            if isinstance(sets, CandidateSets) and sets.rows is not None:
                self.bitsets = [None if u == first else sets.rows[u] for u in range(len(sets))]
            else:
                self.bitsets = [None if u == first else self.bitset(c) for u, c in enumerate(sets)]
        return self.bitsets
