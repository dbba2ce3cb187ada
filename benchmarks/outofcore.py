"""A graph several times larger than the device budget: out-of-core partitioned search against in-core and
host-memory access, side by side in one run.

    python -m benchmarks run outofcore [--scale 21 --edges 16000000 --labels 64 --budget-mb 512 --queries 8]

One R-MAT graph (Zipf vertex labels) whose index is several times the per-GPU budget, and random-walk queries.
Three ways to count each query, in one process, answers checked equal before any time is reported:

* ``in_core``: the whole index resident on the device, unlimited budget (the reference; needs the graph to fit);
* ``out_of_core``: :meth:`PartitionedMatcher.for_budget` (``k`` chosen from the budget): one part resident at a
  time for intra-partition search, inter-partition adjacency gathered from host memory per table chunk (PBE);
  reports bytes moved host->device, the intra/inter split and the peak bytes held in CuPy's pool; the batch
  runs part-major (:meth:`PartitionedMatcher.count_batch`: each part loaded once for all queries);
* ``host_mapped``: (CuPy only) the unpartitioned engine over an index whose adjacency stays in page-locked host
  memory that the kernels read directly, so the GPU fetches the graph across the bus on demand and caches
  nothing: the access pattern of PBE's UMA baseline once the graph exceeds device memory.  (CUDA managed memory
  itself is not used: oversubscribing it can hang the GPU, and the managed-memory advice call failed under
  CUDA 13 with CuPy 14 in our runs.)

Without a GPU the NumPy backend runs ``in_core`` and ``out_of_core`` (the budget then bounds host memory).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import numpy as np


from benchmarks import meta
from benchmarks.generators import query_set, rmat_graph
from distsm import Semantics
from distsm.kernels import cuda_device_count, engine, get_backend
from distsm.kernels.index import DataIndex, build_index, estimate_index_bytes
from distsm.kernels.query_plan import MatchOptions
from distsm.partitioned import PartitionedMatcher

_ADJACENCY = ("nbr", "indptr", "run_start", "run_end", "run_keys", "entry_keys", "pair_keys")


class PoolPeak:
    """Peak bytes in use in CuPy's default pool (an allocator hook; reset between measurements)."""

    def __init__(self, cupy: Any):
        self.cupy = cupy
        self.pool = cupy.get_default_memory_pool()
        self.peak = 0
        cupy.cuda.set_allocator(self._malloc)

    def _malloc(self, size: int) -> Any:
        mem = self.pool.malloc(size)
        self.peak = max(self.peak, self.pool.used_bytes())
        return mem

    def reset(self) -> None:
        self.peak = self.pool.used_bytes()


def host_mapped_index(backend: Any, cupy: Any, data: Any) -> Any:
    """``data``'s GPU index with its adjacency arrays in page-locked host memory that kernels read directly
    (zero copy over the bus, nothing cached on the device); the O(|V|) arrays and the hash live on the device."""
    import dataclasses

    host = build_index(data, np)
    device_id = cupy.cuda.Device().id

    def mapped(a: np.ndarray) -> Any:
        a = np.ascontiguousarray(a)
        pinned = cupy.cuda.alloc_pinned_memory(max(int(a.nbytes), 1))
        np.frombuffer(pinned, a.dtype, a.size).reshape(a.shape)[...] = a
        mem = cupy.cuda.UnownedMemory(pinned.ptr, max(int(a.nbytes), 1), pinned, device_id)
        return cupy.ndarray(a.shape, a.dtype, cupy.cuda.MemoryPointer(mem, 0))

    fields = {f.name: getattr(host, f.name) for f in dataclasses.fields(host)}
    for name in _ADJACENCY:
        if fields[name] is not None and not (name == "pair_keys" and host.pair_keys is host.entry_keys):
            fields[name] = mapped(fields[name])
    if host.pair_keys is host.entry_keys:
        fields["pair_keys"] = fields["entry_keys"]
    for name in ("vertex_labels", "degrees", "sig"):
        fields[name] = cupy.asarray(fields[name])
    fields["vertices_by_label"] = {k: cupy.asarray(v) for k, v in host.vertices_by_label.items()}
    return backend.as_gpu_index(DataIndex(**fields))


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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=16)
    p.add_argument("--edges", type=int, default=400_000)
    p.add_argument("--labels", type=int, default=64)
    p.add_argument("--rmat-a", type=float, default=0.45)
    p.add_argument("--budget-mb", type=float, default=8.0, help="per-GPU budget (MiB) of the out-of-core run")
    p.add_argument("--queries", type=int, default=8)
    p.add_argument("--size", type=int, default=6, help="query vertices")
    p.add_argument("--method", default="metis", choices=["metis", "random", "contiguous"])
    p.add_argument("--no-host-mapped", action="store_true", help="skip the host-mapped baseline")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)

    cupy = None
    if cuda_device_count():
        import cupy
    backend = get_backend("cupy" if cupy is not None else "numpy")
    peak = PoolPeak(cupy) if cupy is not None else None

    rest = (1 - args.rmat_a) / 2.5
    t = time.perf_counter()
    data = rmat_graph(scale=args.scale, edges=args.edges, vertex_labels=args.labels, seed=args.seed, a=args.rmat_a,
                      b=rest, c=rest)
    gen_s = time.perf_counter() - t
    budget = int(args.budget_mb * (1 << 20))
    graph_bytes = estimate_index_bytes(data.n, data.nnz, data.num_effective_labels > 1)
    queries = [q for _, q in query_set(data, args.queries, args.size, args.seed + 1, kinds=("sparse",))]
    print(f"graph: {data.n} vertices, {data.m} edges, index ~{graph_bytes / 2**20:.0f} MiB "
          f"({graph_bytes / budget:.1f}x the {args.budget_mb:g} MiB budget); {len(queries)} queries",
          file=sys.stderr, flush=True)

    # --- out of core (first, so nothing of the whole graph is resident on the device yet)
    t = time.perf_counter()
    ooc = PartitionedMatcher.for_budget(data, budget, backend=backend, method=args.method, seed=args.seed)
    setup_ooc = time.perf_counter() - t
    if peak is not None:
        peak.reset()
    results, ooc_batch_s = _time(lambda: ooc.count_batch(queries, Semantics(), budget), cupy)
    ooc_rows = []
    for i, r in enumerate(results):
        sec = r.seconds["plan"] + r.seconds["intra"] + r.seconds["inter"]
        ooc_rows.append({"count": r.count, "seconds": sec, "intra": sum(r.intra), "inter": r.inter,
                         "bytes_h2d": r.bytes_h2d, "intra_s": r.seconds["intra"], "inter_s": r.seconds["inter"],
                         "plan": r.plan.strategy})
        print(f"out-of-core #{i}: {sec * 1e3:9.1f} ms count {r.count} inter {r.inter} "
              f"H2D {r.bytes_h2d / 2**20:.1f} MiB", file=sys.stderr, flush=True)
    ooc_peak = peak.peak if peak is not None else None

    # --- in core, unlimited budget
    t = time.perf_counter()
    backend.index(data)
    setup_in = time.perf_counter() - t
    in_rows = []
    unlimited = backend.default_budget()
    for i, q in enumerate(queries):
        c, sec = _time(lambda q=q: _count(backend, data, q, unlimited), cupy)
        in_rows.append({"count": c, "seconds": sec})
        print(f"in-core     #{i}: {sec * 1e3:9.1f} ms count {c}", file=sys.stderr, flush=True)
    backend.release(data)

    # --- host-mapped: the whole graph's adjacency in host memory, read by the kernels over the bus
    um_rows, um_error, setup_um = [], None, None
    if cupy is not None and not args.no_host_mapped:
        try:
            t = time.perf_counter()
            um_index = host_mapped_index(backend, cupy, data)
            setup_um = time.perf_counter() - t
            for i, q in enumerate(queries):
                c, sec = _time(lambda q=q: _count(backend, um_index, q, unlimited), cupy)
                um_rows.append({"count": c, "seconds": sec})
                print(f"host-mapped #{i}: {sec * 1e3:9.1f} ms count {c}", file=sys.stderr, flush=True)
            del um_index
        except Exception as e:  # a platform without mapped host memory: report it instead of a number
            um_error = f"{type(e).__name__}: {e}"
            print(f"host-mapped baseline failed: {um_error}", file=sys.stderr)

    agree = all(a["count"] == b["count"] for a, b in zip(ooc_rows, in_rows)) and \
        all(a["count"] == b["count"] for a, b in zip(um_rows, in_rows))

    def med(rows: list[dict]) -> float | None:
        return statistics.median(r["seconds"] for r in rows) if rows else None

    batch = {"in_core": sum(r["seconds"] for r in in_rows), "out_of_core": ooc_batch_s,
             "host_mapped": sum(r["seconds"] for r in um_rows) if um_rows else None}
    total_inter = sum(r["inter"] for r in ooc_rows)
    total = sum(r["count"] for r in ooc_rows)
    summary = {
        "backend": backend.name, "budget_bytes": budget, "graph_index_bytes": graph_bytes,
        "graph_over_budget": round(graph_bytes / budget, 2), "k": ooc.k, "method": args.method,
        "cross_edges": ooc.cross_edge_count, "queries": len(queries), "counts_agree": agree,
        "batch_s": batch,
        "median_s": {"in_core": med(in_rows), "out_of_core": med(ooc_rows), "host_mapped": med(um_rows)},
        "out_of_core_over_in_core": round(batch["out_of_core"] / batch["in_core"], 2) if batch["in_core"] else None,
        "host_mapped_over_out_of_core": round(batch["host_mapped"] / batch["out_of_core"], 2)
        if batch["host_mapped"] else None,
        "bytes_h2d_total": sum(r["bytes_h2d"] for r in ooc_rows),
        "inter_share_of_matches": round(total_inter / total, 4) if total else None,
        "intra_s_total": round(sum(r["intra_s"] for r in ooc_rows), 4),
        "inter_s_total": round(sum(r["inter_s"] for r in ooc_rows), 4),
        "peak_pool_bytes": ooc_peak,
        "setup_s": {"out_of_core_partition": round(setup_ooc, 2), "in_core_index": round(setup_in, 2),
                    "host_mapped_index": None if setup_um is None else round(setup_um, 2)},
        "host_mapped_error": um_error,
    }
    graph = {"generator": "rmat", "scale": args.scale, "vertices": data.n, "edges": data.m, "labels": args.labels,
             "rmat_abc": [args.rmat_a, rest, rest], "seed": args.seed, "generate_s": round(gen_s, 2),
             "query_size": args.size}
    path = meta.write("outofcore", {"graph": graph, "summary": summary,
                                    "queries": [{"i": i, "in_core": a, "out_of_core": b,
                                                 "host_mapped": um_rows[i] if i < len(um_rows) else None}
                                                for i, (a, b) in enumerate(zip(in_rows, ooc_rows))]}, args.out)
    print(f"{'query':>5} {'in-core ms':>11} {'out-of-core ms':>15} {'mapped ms':>11} {'H2D MiB':>9}")
    for i, (a, b) in enumerate(zip(in_rows, ooc_rows)):
        u = f"{um_rows[i]['seconds'] * 1e3:11.1f}" if i < len(um_rows) else f"{'-':>11}"
        print(f"{i:5d} {a['seconds'] * 1e3:11.1f} {b['seconds'] * 1e3:15.1f} {u} {b['bytes_h2d'] / 2**20:9.1f}")
    mapped = batch["host_mapped"]
    print(f"batch s: in-core {batch['in_core']:.3f}, out-of-core {batch['out_of_core']:.3f}, host-mapped "
          f"{mapped if mapped is None else round(mapped, 3)}; peak pool "
          f"{ooc_peak if ooc_peak is None else round(ooc_peak / 2**20, 1)} MiB of {args.budget_mb:g} MiB budget")
    print(f"k={ooc.k} graph/budget={summary['graph_over_budget']} counts agree: {agree}; "
          f"out-of-core/in-core {summary['out_of_core_over_in_core']}, "
          f"host-mapped/out-of-core {summary['host_mapped_over_out_of_core']}; wrote {path}")
    if not agree:
        raise SystemExit("out-of-core, in-core and host-mapped counts disagree")


if __name__ == "__main__":
    main()
