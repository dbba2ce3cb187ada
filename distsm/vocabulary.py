"""The words users choose from: backends, partition methods, adjacency modes and partitioned strategies.

Each vocabulary is written once here, as a ``Literal`` type (for signatures and type checkers) whose values the
matching tuple lists (for validation and the CLI's ``choices=``), or as an enum where the values carry behaviour
(:class:`Strategy`).  Graph file formats are the one vocabulary not listed here: the format registry
(:func:`distsm.formats.registry.register_format`) is their single source, so a new format is one module.

This module is on the ground floor of the package (it imports nothing from distsm), so every layer may use it.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal, get_args

#: A matching backend: ``"numpy"`` (CPU), ``"cupy"`` (GPU) or ``"auto"`` (CuPy when a CUDA device is present).
BackendName = Literal["auto", "numpy", "cupy"]
BACKENDS: tuple[str, ...] = get_args(BackendName)

#: How a data graph is split into parts (:func:`distsm.partition.partition_vertices`).
PartitionMethod = Literal["metis", "random", "contiguous"]
PARTITION_METHODS: tuple[str, ...] = get_args(PartitionMethod)

#: Where a site (this process, or a cluster worker) reads the whole graph's adjacency
#: (:class:`distsm.residency.Residency`): ``"device"`` in device memory, ``"host"`` and ``"gather"`` out of core, or
#: ``"auto"``: on the device when the index fits half the site's device budget, else ``"host"``.
Adjacency = Literal["auto", "device", "host", "gather"]
ADJACENCY_MODES: tuple[str, ...] = get_args(Adjacency)

#: How a query of a cluster batch spreads over the workers: ``"whole"`` (one job on one worker), ``"sliced"``
#: (its spanning searches sliced over the workers) or ``"auto"`` (the planner decides per query).
Distribution = Literal["auto", "whole", "sliced"]
DISTRIBUTIONS: tuple[str, ...] = get_args(Distribution)


def check_adjacency(adjacency: object) -> str:
    """``adjacency`` when it is one of :data:`ADJACENCY_MODES`, else a ValueError naming them."""
    if not isinstance(adjacency, str) or adjacency not in ADJACENCY_MODES:
        raise ValueError(f"adjacency must be one of {', '.join(map(repr, ADJACENCY_MODES))}, got {adjacency!r}")
    return adjacency


class Strategy(str, Enum):
    """How a partitioned search finds its matches.

    ``PBE``: every part's intra-partition join plus one spanning search per edge group.  ``GLOBAL``: one join over
    the whole graph that counts every match once (the intra-partition joins would only repeat part of its work).
    The values are the plain strings ``"pbe"`` and ``"global"``, so either form is accepted and compares equal.
    """

    PBE = "pbe"
    GLOBAL = "global"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: Strategy | str) -> Strategy:
        """``value`` as a :class:`Strategy`; a clear error names the accepted values."""
        try:
            return cls(value)
        except ValueError:
            accepted = " or ".join(repr(s.value) for s in cls)
            raise ValueError(f"strategy must be {accepted}, got {value!r}") from None
