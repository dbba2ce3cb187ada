"""NumPy counts over the whole-graph index held in process memory against the same index memory-mapped from a
saved store, interleaved, then both again with a worker's heap thresholds set (``distsm.cluster.allocator``).

    python -m benchmarks run index-memory --queries q4-sparse8 q19-core8 q45-sparse8 q90-sparse9 q126-sparse10
        q150-sparse10

A CPU cluster worker whose index is resident ("device" adjacency) reads the store's memory map (one copy per
host), a count in process its own copy; this measures what that difference costs.  Queries are named as in the CPU
scaling run's heavy pool (``benchmarks.cluster_scaling``: 256 random-walk queries of 8 to 12 vertices on the R-MAT
graph); every round's counts must agree.
"""

from __future__ import annotations

import tempfile
import threading
import time

import numpy as np

from benchmarks import meta
from benchmarks.cluster_scaling import scaling_queries
from benchmarks.common import add_rmat_options, parser, rmat_from
from distsm.cluster.allocator import set_mmap_threshold
from distsm.kernels import get_backend
from distsm.kernels.budget import default_budget
from distsm.kernels.counting import count
from distsm.kernels.index import build_index
from distsm.partition.graph_store import load_index, save_index
from distsm.semantics import Semantics


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "index_memory")
    add_rmat_options(p, scale=18, edges=4_000_000, labels=64, seed=7)
    p.add_argument("--queries", nargs="+", default=["q4-sparse8", "q19-core8", "q45-sparse8", "q90-sparse9",
                                                     "q126-sparse10", "q150-sparse10"])
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    data, graph = rmat_from(args)
    graphs, names = scaling_queries(data, 256, [8, 12], args.seed, ("sparse", "core", "dense"), "q")
    picked = [g for n, g in zip(names, graphs) if n in set(args.queries)]
    if len(picked) != len(args.queries):
        raise SystemExit(f"unknown query names among {args.queries}")
    numpy, opts = get_backend("numpy"), Semantics().match_options
    memory = build_index(data, np)
    directory = tempfile.mkdtemp(prefix="distsm-index-")
    save_index(memory, directory)
    indexes = {"memory": memory, "mmap": load_index(directory, mmap=True)}
    seconds: dict[str, list[float]] = {}
    counts: set[tuple[int, ...]] = set()

    def timed(kind: str, idx) -> None:
        count(numpy, idx, picked[0], opts, budget=default_budget(numpy, None))  # pages touched, caches warm
        t = time.perf_counter()
        counts.add(tuple(count(numpy, idx, q, opts, budget=default_budget(numpy, None)) for q in picked))
        seconds.setdefault(kind, []).append(round(time.perf_counter() - t, 3))
        print(kind, seconds[kind][-1], flush=True)

    for _ in range(args.rounds):
        for kind, idx in indexes.items():
            timed(kind, idx)
    for _ in range(args.rounds):  # a Dask worker counts in a thread of its own
        worker = threading.Thread(target=timed, args=("memory, in a thread", memory))
        worker.start()
        worker.join()
    heap = set_mmap_threshold(32 << 20)
    for _ in range(args.rounds):
        for kind, idx in indexes.items():
            timed(f"{kind}, heap thresholds set", idx)
    if len(counts) != 1:
        raise SystemExit(f"counts differ between rounds: {counts}")
    meta.write("index_memory", {"graph": graph, "queries": args.queries, "counts": list(counts.pop()),
                                "counts_agree": True, "heap_thresholds_set": heap, "seconds": seconds}, args.out)


if __name__ == "__main__":
    main()
