"""Dask orchestration: starting or joining clusters, pinning partitions, query batches.  Installed as
``distsm.cluster``; the user-facing entry point is :class:`distsm.Matcher`."""

from distsm.cluster.batch import Batch
from distsm.cluster.placement import PartOwners
from distsm.cluster.start import ClusterError, connect, local
from distsm.plan.results import QueryResult

__all__ = ["Batch", "ClusterError", "PartOwners", "QueryResult", "connect", "local"]
