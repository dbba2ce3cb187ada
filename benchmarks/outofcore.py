"""A graph several times larger than the device budget: out-of-core partitioned search against in-core search and
host-memory access, side by side in one run.

    python -m benchmarks run outofcore [--scale 20 --edges 8000000 --labels 256 --budget-mb 64 --queries 8]

One R-MAT graph (Zipf vertex labels) whose index is several times the per-GPU budget, and random-walk queries.
Each query is counted in every mode below in one process; answers are checked equal before any time is reported:

* ``in_core``: the whole index resident on the device, unlimited budget (the reference; needs the graph to fit);
* ``out_of_core``: :class:`PartitionedMatcher` with ``partitions="auto"`` (``k`` chosen from the budget) running
  each query's partitioned plan (``distribute="sliced"``): parts resident within their share of the budget for
  intra-partition search, inter-partition adjacency read in place from page-locked host memory
  (``adjacency="host"``, zero copy);
* ``out_of_core_gather``: the same partition, inter-partition adjacency copied per table chunk as PBE does
  (``adjacency="gather"``; bytes moved host->device reported);
* ``host_mapped``: (CuPy only) no partitioning: the unpartitioned engine over the whole graph's adjacency in
  page-locked host memory, so every probe crosses the bus and nothing is cached on the device: the access
  pattern of PBE's UMA baseline once the graph exceeds device memory.  (CUDA managed memory itself is not used:
  oversubscribing it can hang the GPU, and the managed-memory advice call failed under CUDA 13 with CuPy 14.)

Out-of-core batches run part-major (:meth:`PartitionedMatcher.count_batch`: each part loaded once for all queries)
and record the peak bytes in CuPy's pool.  Without a GPU the NumPy backend runs the in-core and out-of-core modes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Any

import numpy as np

from benchmarks import common, meta
from benchmarks.generators import query_set
from distsm import Semantics
from distsm.kernels import cuda_device_count, engine, get_backend
from distsm.kernels.cupy.pool import watch
from distsm.kernels.index import build_index, estimate_index_bytes
from distsm.kernels.query_plan import MatchOptions
from distsm.partition import Partitioning
from distsm.partitioned import PartitionedMatcher
from distsm.plan.distribution import Directions
from distsm.vocabulary import PARTITION_METHODS


def _time(fn: Any, cupy: Any) -> tuple[Any, float]:
    if cupy is not None:
        cupy.cuda.get_current_stream().synchronize()
    t = time.perf_counter()
    out = fn()
    if cupy is not None:
        cupy.cuda.get_current_stream().synchronize()
    return out, time.perf_counter() - t


def _count(backend: Any, data: Any, query: Any, budget: int) -> int:
    prepared = engine.prepare(backend, data, query, MatchOptions())
    return 0 if prepared is None else sum(int(c) for c in engine.walk(backend, prepared, budget, True))


def _run_batch(matcher: PartitionedMatcher, queries: list, budget: int, cupy: Any, peak: Any) -> dict[str, Any]:
    if peak is not None:
        peak.reset()
    sliced = Directions(distribute="sliced")  # the partitioned plan, not one join over the whole graph
    results, batch_s = _time(lambda: matcher.count_batch(queries, Semantics(), budget, sliced), cupy)
    rows = [{"count": r.count, "seconds": r.seconds["plan"] + r.seconds["intra"] + r.seconds["inter"],
             "intra": None if r.intra is None else sum(r.intra), "inter": r.inter, "bytes_h2d": r.bytes_h2d,
             "intra_s": r.seconds["intra"],
             "inter_s": r.seconds["inter"], "plan": r.strategy.value} for r in results]
    return {"batch_s": batch_s, "rows": rows, "peak_pool_bytes": None if peak is None else peak.peak,
            "bytes_h2d": sum(r["bytes_h2d"] for r in rows), "intra_s": sum(r["intra_s"] for r in rows),
            "inter_s": sum(r["inter_s"] for r in rows)}


def _run_each(fn: Any, queries: list, cupy: Any) -> dict[str, Any]:
    rows = []
    for q in queries:
        c, sec = _time(lambda q=q: fn(q), cupy)
        rows.append({"count": c, "seconds": sec})
    return {"batch_s": sum(r["seconds"] for r in rows), "rows": rows}


def _save(args: Any, graph: dict[str, Any], budget: int, graph_bytes: int, k: int, cross: int,
          backend: str, modes: dict[str, dict[str, Any]], setup: dict[str, float], n_queries: int,
          complete: bool) -> tuple[Any, dict[str, Any], bool]:
    """Write the JSON with the modes run so far (after every mode: a run cut short keeps what it measured)."""
    ref_mode = "in_core" if "in_core" in modes else next(iter(modes))
    ref = [r["count"] for r in modes[ref_mode]["rows"]]
    agree = all([r["count"] for r in m["rows"]] == ref for m in modes.values())
    base = modes["out_of_core"]["batch_s"]
    ooc_rows = modes["out_of_core"]["rows"]
    total = sum(r["count"] for r in ooc_rows)
    summary = {
        "backend": backend, "budget_bytes": budget, "graph_index_bytes": graph_bytes,
        "graph_over_budget": round(graph_bytes / budget, 2), "k": k, "method": args.method, "cross_edges": cross,
        "queries": n_queries, "counts_agree": agree, "complete": complete,
        "batch_s": {name: round(m["batch_s"], 4) for name, m in modes.items()},
        "over_out_of_core": {name: round(m["batch_s"] / base, 2) for name, m in modes.items() if base > 0},
        "peak_pool_bytes": {name: m.get("peak_pool_bytes") for name, m in modes.items() if "peak_pool_bytes" in m},
        "bytes_h2d": {name: m["bytes_h2d"] for name, m in modes.items() if "bytes_h2d" in m},
        "intra_inter_s": {name: [round(m["intra_s"], 4), round(m["inter_s"], 4)] for name, m in modes.items()
                          if "intra_s" in m},
        "inter_share_of_matches": round(sum(r["inter"] or 0 for r in ooc_rows) / total, 4) if total else None,
        "setup_s": {name: round(v, 2) for name, v in setup.items()},
    }
    per_query = [{name: m["rows"][i] for name, m in modes.items()} for i in range(n_queries)]
    path = meta.write("outofcore", {"graph": {**graph, "query_size": args.size}, "summary": summary,
                                    "queries": per_query}, args.out)
    return path, summary, agree


def main(argv=None):
    p = common.parser(__doc__, "outofcore")
    common.add_rmat_options(p, scale=16, edges=400_000, labels=256, seed=5)
    p.add_argument("--budget-mb", type=float, default=8.0, help="per-GPU budget (MiB) of the out-of-core runs")
    p.add_argument("--queries", type=int, default=8)
    p.add_argument("--size", type=int, default=6, help="query vertices")
    p.add_argument("--method", default="metis", choices=PARTITION_METHODS)
    p.add_argument("--no-gather", action="store_true", help="skip the gathering (PBE transfer) mode")
    args = p.parse_args(argv)

    cupy = None
    if cuda_device_count():
        import cupy
    backend = get_backend("cupy" if cupy is not None else "numpy")
    peak = watch(cupy) if cupy is not None else None

    data, graph = common.rmat_from(args)
    budget = int(args.budget_mb * (1 << 20))
    graph_bytes = estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1)
    queries = [q for _, q in query_set(data, args.queries, args.size, args.seed + 1, kinds=("sparse",))]
    print(f"graph: {data.n} vertices, {data.m} edges, index ~{graph_bytes / 2**20:.0f} MiB "
          f"({graph_bytes / budget:.1f}x the {args.budget_mb:g} MiB budget); {len(queries)} queries",
          file=sys.stderr, flush=True)

    modes: dict[str, dict[str, Any]] = {}
    setup: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as store_dir:
        # Out of core first, so nothing of the whole graph is resident on the device yet.  The partition is
        # computed once (saved to store_dir) and reused by the gathering mode.
        with common.Timer() as t:
            ooc = PartitionedMatcher(data, Partitioning("auto", args.method, args.seed, "host", store_dir),
                                     backend=backend, budget=budget)
        setup["partition"] = t.seconds
        modes["out_of_core"] = _run_batch(ooc, queries, budget, cupy, peak)
        k, cross = ooc.k, ooc.cross_edge_count
        print(f"out-of-core (host) batch {modes['out_of_core']['batch_s']:.3f} s", file=sys.stderr, flush=True)
        _save(args, graph, budget, graph_bytes, k, cross, backend.name, modes, setup, len(queries), False)
        if not args.no_gather:
            gather = PartitionedMatcher(data, Partitioning(ooc.k, args.method, args.seed, "gather", store_dir),
                                        backend=backend)
            modes["out_of_core_gather"] = _run_batch(gather, queries, budget, cupy, peak)
            print(f"out-of-core (gather) batch {modes['out_of_core_gather']['batch_s']:.3f} s", file=sys.stderr,
                  flush=True)
            del gather
            _save(args, graph, budget, graph_bytes, k, cross, backend.name, modes, setup, len(queries),
                  False)
        del ooc

    with common.Timer() as t:
        backend.index(data)
    setup["in_core_index"] = t.seconds
    unlimited = backend.default_budget()
    modes["in_core"] = _run_each(lambda q: _count(backend, data, q, unlimited), queries, cupy)
    backend.release(data)
    print(f"in-core batch {modes['in_core']['batch_s']:.3f} s", file=sys.stderr, flush=True)
    _save(args, graph, budget, graph_bytes, k, cross, backend.name, modes, setup, len(queries), False)

    if cupy is not None:
        with common.Timer() as t:
            mapped = backend.host_resident(build_index(data, np))
        setup["host_mapped_index"] = t.seconds
        modes["host_mapped"] = _run_each(lambda q: _count(backend, mapped, q, unlimited), queries, cupy)
        print(f"host-mapped batch {modes['host_mapped']['batch_s']:.3f} s", file=sys.stderr, flush=True)
        del mapped

    path, summary, agree = _save(args, graph, budget, graph_bytes, k, cross, backend.name, modes, setup,
                                 len(queries), complete=True)
    names = list(modes)
    print(f"{'query':>5} " + " ".join(f"{n + ' ms':>22}" for n in names))
    for i in range(len(queries)):
        print(f"{i:5d} " + " ".join(f"{modes[n]['rows'][i]['seconds'] * 1e3:22.1f}" for n in names))
    print(f"k={k}, graph/budget={summary['graph_over_budget']}, counts agree: {agree}")
    print(f"batch seconds {summary['batch_s']}; relative to out_of_core {summary['over_out_of_core']}")
    print(f"peak pool bytes {summary['peak_pool_bytes']} (budget {budget}); bytes host->device {summary['bytes_h2d']}")
    print(f"wrote {path}")
    if not agree:
        raise SystemExit("the modes disagree on a count")


if __name__ == "__main__":
    main()
