"""distsm: exact subgraph matching on GPUs and CPUs, partitioned and orchestrated by Dask.

Public API::

    import distsm
    g = distsm.read_graph("data.graph")
    q = distsm.read_graph("query.graph")
    distsm.count(g, q)                  # number of embeddings (a Python int)
    distsm.match(g, q, limit=10)        # int64[rows, q.n]: column i = data vertex of query vertex i
    distsm.count_batch(g, [q], partitions=4)   # QueryResults of a part-major batch of queries
    distsm.match(g, q, as_frame=True)   # a DataFrame in the graphs' node names
    distsm.save_graph(g, "g.distsm"); distsm.load_graph("g.distsm")   # binary, memory-mapped reload
    next(distsm.iter_mappings(g, q))    # {query node: data node}
    with distsm.options({"gpu.fuse-levels": False}): ...   # tuning options (dask.config, distsm.*)
    distsm.cache_info(); distsm.clear_caches()   # what the package keeps (indexes, plans, ...), and letting it go
"""

from distsm._version import __version__
from distsm.caches import clear as clear_caches, info as cache_info
from distsm.config import options
from distsm.api import as_graph, count, count_batch, explain, iter_batch, iter_mappings, iter_matches, match
from distsm.errors import BackendUnavailableError, GraphError, GraphFormatError
from distsm.formats import load_graph, read_graph, read_graphs, save_graph, write_graph
from distsm.graph import Graph
from distsm.labels import LabelVocabulary
from distsm.partition.spec import Partitioning
from distsm.semantics import Semantics
from distsm.plan.automorphism import automorphism_count
from distsm.plan.results import QueryResult
from distsm.vocabulary import Strategy


def __getattr__(name: str):
    # Matcher pulls in Dask; importing it lazily keeps `import distsm` light for single-process use.
    if name == "Matcher":
        from distsm.matcher import Matcher

        return Matcher
    if name == "warmup":
        from distsm.compile_ahead import warmup

        return warmup
    if name == "LocalClusterSpec":
        from distsm.cluster.start import LocalClusterSpec

        return LocalClusterSpec
    raise AttributeError(f"module 'distsm' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The lazy names above are part of the API: tab completion and dir() list them too.
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "BackendUnavailableError", "Graph", "GraphError", "GraphFormatError", "LabelVocabulary", "LocalClusterSpec",
    "Matcher", "Partitioning", "QueryResult", "Semantics", "Strategy", "as_graph", "automorphism_count", "cache_info",
    "clear_caches", "count",
    "count_batch", "explain", "iter_batch", "iter_mappings", "iter_matches", "load_graph", "match", "options",
    "read_graph", "read_graphs", "save_graph", "warmup", "write_graph", "__version__",
]
