"""How a partitioned search splits its data graph: :class:`Partitioning`, one description for both executors."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from distsm.partition.methods import check_method
from distsm.vocabulary import Adjacency, PartitionMethod, check_adjacency


@dataclass(frozen=True)
class Partitioning:
    """How a partitioned search splits the data graph, in process and on a cluster alike.

    Args:
        parts: the number of parts, or ``"auto"``: chosen from the device budget
            (:func:`~distsm.residency.partitions_for_budget`): one per site (this process, or each worker) when the
            whole graph's index stays on the device, else as many as make every part's index fit its share.
        method, seed: the partitioner (``"metis"``, ``"random"``, ``"contiguous"``) and its seed.
        adjacency: where spanning searches read the whole graph's adjacency: ``"auto"`` (on the device when its
            index fits in half the device budget, else ``"host"``), ``"device"``, ``"host"`` or ``"gather"`` (see
            :class:`~distsm.residency.Residency`).
        directory: where the partition store is kept on disk (None: in memory in process; on a cluster beside
            the data file or in a temporary directory).
    """

    parts: int | str = "auto"
    method: PartitionMethod = "metis"
    seed: int = 0
    adjacency: Adjacency = "auto"
    directory: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        check_adjacency(self.adjacency)
        check_method(self.method)
        if self.parts != "auto" and (isinstance(self.parts, bool) or not isinstance(self.parts, (int, np.integer))
                                     or self.parts < 1):
            raise ValueError(f"partitions must be a positive integer or 'auto', got {self.parts!r}")
