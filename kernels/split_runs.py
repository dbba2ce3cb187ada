"""The general join's adjacency runs split by the neighbours' vertex labels.

A join step extends query vertex ``u`` from the image ``x`` of an earlier neighbour by reading the run ``N(x, e)``
and dropping every entry outside ``u``'s candidates, which all carry ``u``'s vertex label.  On a graph with many
vertex labels most of what it reads is dropped: gMatch's Q_8 (16 labels) in GSI order reads 196M entries through
whole runs and 9.0M through runs of the new vertex's label.  The *split* index of a data index has one run per
(vertex, effective label, neighbour's vertex label), from the regrouped adjacency refinement builds anyway
(:func:`~distsm.kernels.candidate_edges.labelled_runs`), laid out as a :class:`DataIndex` whose effective labels
are ``e * S + l`` (``S`` vertex labels): every backend's join reads it as it is, once each step's labels are
numbered the same way (:meth:`SplitIndex.plan`).  Membership checks read the split runs too (shorter searches); entry
counts between two vertices (induced matching) read the unchanged ``pair_keys``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from distsm.kernels import array_ops as ops
from distsm.kernels.backend import Backend
from distsm.kernels.budget import BudgetPlan
from distsm.kernels.candidate_edges import labelled_runs
from distsm.kernels.index import DataIndex
from distsm import caches
from distsm.kernels.prepared import PreparedQuery
from distsm.kernels.query_plan import QueryPlan

_SPLIT = caches.cache("split indexes",
                      "DataIndex -> its index over runs split by neighbour label (SplitIndex), or False where refused")


@dataclass(frozen=True)
class SplitIndex:
    """A data index's runs split by the neighbours' vertex labels (below ``labels``), adopted by a backend."""

    index: DataIndex
    labels: int

    def label(self, effective: int, vertex_label: int) -> int:
        """The split run label of the neighbours of vertex label ``vertex_label`` through ``effective``."""
        return effective * self.labels + vertex_label

    def plan(self, plan: QueryPlan, vertex_labels: Sequence[int]) -> QueryPlan:
        """``plan`` with every step's run labels numbered for this index: each step reads and checks runs of its
        new vertex's label (``vertex_labels`` of the query)."""
        # A vertex label the data lacks (at or past ``labels``) would alias another run, but its vertex has no
        # candidate, so no join of the query runs.
        steps = []
        for step in plan.steps:
            own = vertex_labels[step.vertex]
            steps.append(step.relabelled(self.label(step.first_label, own),
                                         tuple((col, self.label(e, own)) for col, e in step.checks)))
        return dataclasses.replace(plan, steps=tuple(steps))


#: Cached for an index whose split was weighed and refused, so that no join weighs it again.
_REFUSED = False


def split_index(backend: Backend, idx: DataIndex, budget: int | BudgetPlan) -> SplitIndex | None:
    """The :class:`SplitIndex` of ``idx`` on ``backend`` (built once per index), or None: one vertex label, no
    edges, an adjacency read over a bus (its point is to stay out of device memory), or a regrouping or split
    index over its byte bounds (``LABELLED_RUNS_BYTES``; its own arrays within
    :meth:`~distsm.kernels.budget.BudgetPlan.split_room` of ``budget``, the budget of the first join that asks:
    it is weighed once per index, and stays while its index does, on top of the regrouped adjacency it shares)."""
    # Keyed by the index as this backend holds it: a host index a device adopted is its own key on the host.
    own = backend.adopt_index(idx)
    cached = _SPLIT.get(own)
    if cached is not None:
        return cached or None
    if backend.adjacency_over_bus(own):
        return None
    runs = labelled_runs(backend, own)
    if runs is None or not runs.nbr.shape[0]:
        return None
    lengths = ops.subtract(runs.offsets[1:], runs.offsets[:-1])
    keys = ops.flatnonzero(lengths)  # (v * L + e) * S + l == v * (L * S) + (e * S + l): the split run keys
    extra = 8 * int(runs.nbr.shape[0]) + 40 * int(keys.shape[0])
    if extra > BudgetPlan.of(budget).split_room():
        _SPLIT.put(own, _REFUSED)
        return None
    run_start, run_end = ops.take(runs.offsets, keys), ops.take(runs.offsets[1:], keys)
    run_of_entry, _ = backend.expand(ops.take(lengths, keys))
    fields = {f.name: getattr(own, f.name) for f in dataclasses.fields(DataIndex)}
    fields.update(num_labels=own.num_labels * runs.labels, nbr=runs.nbr, run_keys=keys,
                  run_start=run_start, run_end=run_end, entry_keys=ops.scaled_add(run_of_entry, own.n, runs.nbr),
                  nbytes=own.nbytes + extra)
    return _SPLIT.put(own, SplitIndex(backend.adopt_index(DataIndex(**fields)), runs.labels))


def split(backend: Backend, prepared: PreparedQuery, budget: int | BudgetPlan, trial: bool = False) -> PreparedQuery:
    """``prepared`` joined over its index's :class:`SplitIndex` (weighed against the join's ``budget``) where
    there is one and its query's vertex labels are known, else ``prepared`` itself.

    A ``trial`` on the host reads whole runs: its allowance counts entries read, and on the CPU an entry of a
    split run costs several of a whole one (it nearly always passes the candidate test, so the checks and the
    row it writes follow), so split, the same allowance let gMatch's Q_8 read on to a level of 94K rows (0.3 ->
    5.1 ms before stopping).  On a device entries are read in parallel and a trial's time is its reads and
    launches."""
    on = bool(prepared.vertex_labels) and (backend.on_device or not trial)
    found = split_index(backend, prepared.index, budget) if on else None
    if found is None:
        return prepared
    return dataclasses.replace(prepared, index=found.index, plan=found.plan(prepared.plan, prepared.vertex_labels))
