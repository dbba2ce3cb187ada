"""Cutting a spanning search into slices: ranges of start-vertex ids balanced by an estimate of their work.

A slice (:data:`Slice`) is a range of the ids of the vertices a search starts from, and optionally a range of the
ids of the vertices it visits second: disjoint slices that cover every id split a search into disjoint pieces.  The
client cuts a query it slices up front (:class:`~distsm.Matcher`), and a worker cuts a query it was sent whole and
found heavy without a counting plan (:mod:`distsm.cluster.tasks`): both cut the same way, here.  A heavy query with
a counting plan is cut by that plan instead (:mod:`distsm.plan.split`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from distsm.graph import Graph
from distsm.kernels.backend import Backend
from distsm.kernels.index import DataIndex
from distsm.plan.search import start_candidates
from distsm.semantics import Semantics

#: A slice of a spanning search: a range of start vertex ids, and optionally a range of the ids of the vertices
#: visited second (one heavy start vertex's work split over several jobs).
Slice = tuple[range, range | None]


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


def cut(weights: np.ndarray, ids: np.ndarray | None, pieces: int, n: int,
        second_ranges: Callable[[int, int], list[range | None]]) -> list[Slice]:
    """Slices of a search over the start vertices ``ids`` (sorted; None: every vertex id) whose estimated work is
    ``weights``, covering every id below ``n`` once: ``pieces`` runs of about equal weight (finer than one per
    worker, so the scheduler can even out what the estimate misses).  A start vertex heavier than a run's share is
    a slice of its own, split again by ``second_ranges(vertex, pieces)`` (id ranges of the vertices visited
    second), so one skewed vertex does not decide the batch time."""
    share = float(weights.sum()) / pieces
    heavy = np.flatnonzero(weights > share)
    begins = np.unique(np.concatenate([balanced_starts(weights, pieces), heavy, heavy + 1]))
    begins = begins[begins < weights.shape[0]]
    bounds = [*begins.tolist(), weights.shape[0]]
    first = begins.tolist() if ids is None else ids[begins].tolist()
    cuts = [*first, n]
    cuts[0] = 0
    out: list[Slice] = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        start = range(cuts[i], cuts[i + 1])
        if b - a == 1 and weights[a] > share:
            split = min(int(np.ceil(weights[a] / share)), pieces)
            out.extend((start, second) for second in second_ranges(first[i], split))
        else:
            out.append((start, None))
    return out


def neighbour_ranges(index: DataIndex, weights: np.ndarray, v: int, pieces: int) -> list[range | None]:
    """At most ``pieces`` id ranges covering every vertex id once, each holding about the same total ``weights``
    (per data vertex) of ``v``'s neighbours ([None]: one range, no split)."""
    nbrs = np.unique(np.asarray(index.nbr[int(index.indptr[v]):int(index.indptr[v + 1])]))
    begins = balanced_starts(weights[nbrs], pieces)
    if begins.shape[0] < 2:
        return [None]
    cuts = [0, *nbrs[begins[1:]].tolist(), index.n]
    return [range(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def global_slices(backend: Backend, index: DataIndex, query: Graph, sem: Semantics, candidates: list[Any],
                  pieces: int) -> list[Slice]:
    """Slices of the global join of ``query`` (``candidates``: its filter on ``backend``'s host ``index``): ranges
    of its start candidates balanced by their candidate edges towards the vertex visited second
    (:func:`~distsm.plan.search.start_candidates`), a heavy one split by the degrees of its neighbours."""
    ids, weights = start_candidates(backend, index, query, sem, candidates)
    degrees = np.maximum(np.asarray(index.degrees), 1)
    return cut(np.asarray(weights, np.int64), np.asarray(ids, np.int64), pieces, index.n,
               lambda v, split: neighbour_ranges(index, degrees, v, split))
