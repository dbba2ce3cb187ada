"""Partitioning of the data graph (pymetis) and the on-disk partition store.  Installed as ``distsm.partition``.

::

    from distsm.partition import PartitionStore, load_or_build
    store = load_or_build(graph, 8, directory="hprd.parts")   # opens a fresh store or rebuilds and saves it
    store.stats.cross_edges, store.stats.balance
    p = store.part(3)              # LocalPart: p.graph (induced subgraph, local ids), p.global_ids (ascending)
    src, dst, labels = store.cross_edges()
    index = store.adjacency_index()  # whole-graph DataIndex, memory-mapped from the store
"""

from distsm.partition.graph_store import load_index, save_index
from distsm.partition.methods import PARTITION_METHODS, partition_vertices
from distsm.partition.metis import PartitionError, metis_parts
from distsm.partition.simple import contiguous_parts, random_parts
from distsm.partition.spec import Partitioning
from distsm.partition.store import (
    LocalPart,
    PartitionStats,
    PartitionStore,
    StalePartitionError,
    graph_fingerprint,
    load_or_build,
)

__all__ = [
    "PARTITION_METHODS", "LocalPart", "PartitionError", "PartitionStats", "PartitionStore", "Partitioning",
    "StalePartitionError",
    "contiguous_parts", "graph_fingerprint", "load_index", "load_or_build", "metis_parts", "partition_vertices",
    "random_parts", "save_index",
]
