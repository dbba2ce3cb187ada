"""Scaling of the Dask layer over 1, 2, 4 ... GPUs (dask-cuda workers, one partition per GPU).

    python -m benchmarks.cluster_scaling --gpus 1 2 [--scale 20 --edges 8000000 --labels 32 --queries 40 --size 8]

On an R-MAT power-law graph (Zipf vertex labels) with random-walk queries, for each GPU count: start a
``LocalCUDACluster`` through distsm, partition the graph into one part per GPU, check that each part is loaded
on its own worker, count the batch, and record the batch's wall time, per-stage seconds (intra/inter) and the
adjacency bytes the spanning searches read.  The counts must agree between GPU counts (and, on a CPU-only
machine, the script runs on LocalCluster CPU workers with ``--cpu``).  Speedup and parallel efficiency are
relative to the smallest GPU count, on the queries that finished within ``--timeout`` in every run.
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks import meta
from benchmarks.common import add_rmat_options, hprd_data_path, hprd_suite, parser, rmat_from
from benchmarks.generators import query_set
from distsm.vocabulary import PARTITION_METHODS


def hprd_check(n: int, cpu: bool) -> None:
    """All 200 HPRD queries on an ``n``-worker cluster, one partition per worker, against the known answers."""
    import distsm
    from distributed import Client

    from distsm.cluster import local

    _, queries, expected = hprd_suite()
    cluster = local(gpus=None, workers=n) if cpu else local(gpus=n, dashboard_address="127.0.0.1:0")
    try:
        with Client(cluster) as client, distsm.Matcher(str(hprd_data_path()), cluster=client,
                                                       partitions=n, backend="numpy" if cpu else "cupy",
                                                       partition_dir="/tmp/distsm-hprd-parts") as m:
            devices = client.run(_visible_device)
            t = time.perf_counter()
            results = m.submit(list(queries.values()), names=list(queries)).results()
            wall = time.perf_counter() - t
            placement = {r["part"]: (r["worker"], r["bytes"]) for r in m.load_report}
    finally:
        cluster.close()
    wrong = [r.query for r in results if not r.ok or r.count != expected[r.query]]
    print(f"HPRD on {n} workers: {200 - len(wrong)}/200 right in {wall:.2f}s; placement {placement}; "
          f"worker devices {devices}", file=sys.stderr, flush=True)
    if wrong:
        raise SystemExit(f"HPRD check failed on {wrong[:5]}")


def _visible_device() -> str:
    import os

    return os.environ.get("CUDA_VISIBLE_DEVICES", "")


def one_run(data, graphs: list, names: list[str], n: int, args: argparse.Namespace) -> dict:
    """Count the batch on an ``n``-GPU (``n``-worker with ``--cpu``) cluster with one part per GPU."""
    import distsm
    from distributed import Client

    from distsm.cluster import local

    cluster = local(gpus=None, workers=n) if args.cpu else local(gpus=n, dashboard_address="127.0.0.1:0")
    try:
        with Client(cluster) as client:
            t = time.perf_counter()
            m = distsm.Matcher(data, cluster=client, partitions=n, backend="numpy" if args.cpu else "cupy",
                               partition_method=args.method)
            setup_s = time.perf_counter() - t
            placed = {r["part"]: r["worker"] for r in m.load_report}
            # the whole graph's adjacency each worker holds for spanning searches (copied once, at load)
            loaded = max(r["adjacency_bytes"] for r in m.load_report) / 2**20
            m.count(graphs[0])  # warm-up: kernels compiled, adjacency loaded on every worker
            t = time.perf_counter()
            results = m.submit(graphs, names=names, timeout=args.timeout).results()
            wall = time.perf_counter() - t
            m.close()
    finally:
        try:
            cluster.close(timeout=60)
        except Exception as e:  # a kernel still running past the batch timeout keeps its worker from closing
            print(f"closing the {n}-GPU cluster: {e!r} (ignored)", file=sys.stderr, flush=True)
    ok = [r for r in results if r.ok]
    return {"gpus": n, "workers": m.n_workers, "partitions": m.k, "placement": placed,
            "distinct_workers": len(set(placed.values())), "setup_s": round(setup_s, 3),
            "adjacency_loaded_mb_per_worker": round(loaded, 1) if n > 1 else 0.0,
            "cross_edges": m.cross_edge_count, "batch_wall_s": round(wall, 4), "finished": len(ok),
            "intra_s": round(sum(r.seconds.get("intra", 0) for r in ok), 4),
            "inter_s": round(sum(r.seconds.get("inter", 0) for r in ok), 4),
            "strategies": {s: sum(r.strategy == s for r in ok) for s in ("pbe", "global")},
            "queries": {r.query: {"status": r.status, "count": r.count, "strategy": r.strategy,
                                  "intra": sum(r.intra) if r.ok and r.intra is not None else None,
                                  "inter": r.inter, "gathered_bytes": r.gathered_bytes,
                                  "seconds": {k: round(v, 5) for k, v in r.seconds.items()}}
                        for r in results}}


def summarize(runs: list[dict], names: list[str]) -> tuple[list[dict], list[str], bool]:
    """Speedup and efficiency relative to the first run, and the intra/inter split and adjacency gathered on
    the queries every run finished; whether their counts agree."""
    common = [q for q in names if all(r["queries"][q]["status"] == "ok" for r in runs)]
    agree = all(len({r["queries"][q]["count"] for r in runs}) == 1 for q in common)
    base = runs[0]
    summary = []
    for r in runs:
        speedup = base["batch_wall_s"] / r["batch_wall_s"] if r["batch_wall_s"] else None
        stage = {s: round(sum(r["queries"][q]["seconds"].get(s, 0) for q in common), 4) for s in ("intra", "inter")}
        summary.append({"gpus": r["gpus"], "batch_wall_s": r["batch_wall_s"], "finished": r["finished"],
                        "speedup": round(speedup, 3) if speedup else None,
                        "efficiency": round(speedup * base["gpus"] / r["gpus"], 3) if speedup else None,
                        "intra_s": stage["intra"], "inter_s": stage["inter"],
                        "task_seconds_common": round(stage["intra"] + stage["inter"], 4),
                        "adjacency_read_gb": round(sum(r["queries"][q]["gathered_bytes"] for q in common) / 2**30,
                                                   2),
                        "adjacency_loaded_mb_per_worker": r["adjacency_loaded_mb_per_worker"],
                        "slowest_slice_s": max((r["queries"][q]["seconds"].get("inter_slice_max", 0) for q in common),
                                               default=0)})
    return summary, common, agree


def main(argv=None):
    p = parser(__doc__, "cluster_scaling")
    add_rmat_options(p, scale=20, edges=8_000_000, labels=32, seed=7)
    p.add_argument("--gpus", type=int, nargs="+", default=[1, 2])
    p.add_argument("--queries", type=int, default=40)
    p.add_argument("--size", type=int, default=8)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per batch")
    p.add_argument("--method", default="random", choices=PARTITION_METHODS)
    p.add_argument("--cpu", action="store_true", help="CPU workers instead of GPUs (for a dry run)")
    p.add_argument("--hprd", action="store_true",
                   help="first check the 200 HPRD known answers on the largest cluster")
    args = p.parse_args(argv)

    if args.hprd:
        hprd_check(max(args.gpus), args.cpu)
    data, graph = rmat_from(args)
    queries = query_set(data, args.queries, args.size, args.seed, kinds=("core", "dense"))
    names = [f"q{i}-{kind}" for i, (kind, _) in enumerate(queries)]
    graphs = [q for _, q in queries]
    print(f"graph {data.n} vertices {data.m} edges in {graph['generate_s']:.1f}s; {len(graphs)} queries of "
          f"{args.size} vertices", file=sys.stderr, flush=True)
    runs: list[dict] = []
    for n in args.gpus:
        runs.append(one_run(data, graphs, names, n, args))
        r = runs[-1]
        print(f"{n} GPU(s): {r['finished']}/{len(graphs)} finished in {r['batch_wall_s']:.2f}s (task seconds: "
              f"intra {r['intra_s']:.2f}, inter {r['inter_s']:.2f})", file=sys.stderr, flush=True)
        # Written after every run: a later run that times out or crashes must not lose the earlier ones.
        summary, common, agree = summarize(runs, names)
        path = meta.write("cluster_scaling", {"graph": graph, "query_size": args.size, "counts_agree": agree,
                                              "common_queries": len(common), "complete": len(runs) == len(args.gpus),
                                              "summary": summary, "runs": runs}, args.out)
    print(f"{'gpus':>4} {'finished':>8} {'wall s':>8} {'speedup':>8} {'eff':>6} {'intra s':>8} {'inter s':>8} "
          f"{'read GB':>8} {'adj MB/w':>8} {'slice s':>8}")
    for s in summary:
        print(f"{s['gpus']:4d} {s['finished']:8d} {s['batch_wall_s']:8.2f} {s['speedup'] or 0:8.2f} "
              f"{s['efficiency'] or 0:6.2f} {s['intra_s']:8.2f} {s['inter_s']:8.2f} {s['adjacency_read_gb']:8.1f} "
              f"{s['adjacency_loaded_mb_per_worker']:8.0f} {s['slowest_slice_s']:8.2f}")
    print(f"counts agree across runs on {len(common)} common queries: {agree}; wrote {path}")
    if not common or not agree or any(r["distinct_workers"] != min(r["partitions"], r["workers"]) for r in runs):
        raise SystemExit("scaling check failed: no common query, counts disagree, or parts not spread out")


if __name__ == "__main__":
    main()
