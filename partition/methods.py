"""Dispatch between the vertex-partitioning methods."""

from __future__ import annotations

import numpy as np

from distsm.graph import Graph
from distsm.partition.metis import check_k, metis_parts
from distsm.partition.simple import contiguous_parts, random_parts
from distsm.vocabulary import PARTITION_METHODS


def check_method(method: str) -> str:
    """``method`` if it is one of :data:`PARTITION_METHODS`, else ValueError naming the choices."""
    if method not in PARTITION_METHODS:
        raise ValueError(f"unknown partition method {method!r}; choose one of {', '.join(PARTITION_METHODS)}")
    return method


def partition_vertices(graph: Graph, k: int, *, method: str = "metis", seed: int = 0) -> np.ndarray:
    """Assign every vertex of ``graph`` a part in ``0..k-1``; returns ``int32[n]``.

    ``method``: ``"metis"`` (:func:`~distsm.partition.metis.metis_parts`, small edge cut, run in a child process),
    ``"random"`` (:func:`~distsm.partition.simple.random_parts`, seeded) or ``"contiguous"``
    (:func:`~distsm.partition.simple.contiguous_parts`, id ranges; ``seed`` is ignored).
    """
    check_method(method)
    k = check_k(k)
    if method == "metis":
        return metis_parts(graph, k, seed=seed)
    if method == "random":
        return random_parts(graph, k, seed=seed)
    return contiguous_parts(graph, k)
