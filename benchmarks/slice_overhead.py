"""What splitting a heavy count into shared-plan slices costs, in one process: each query counted whole, then as
about 8 and 32 slices (:mod:`distsm.plan.split`) run one after another, their summed and longest times.

    python -m benchmarks run slices --backend cupy --scale 22 --edges 32000000 --labels 64

Queries are random-walk queries of 8 and 10 vertices on the R-MAT graph whose count takes ``--low`` to ``--high``
seconds (the first ``--queries``), or with ``--cluster-batch`` those of ``cluster_scaling``'s heavy batch (its
``--queries 16 --size 8 12`` without ``--heavy-seconds``, same graph options) in that window, or with
``--cluster-batch small`` those of its small batch (``--small-queries 200 --small-size 4 6``), or with
``--cluster-batch pool`` those of the pool its CPU run selects its heavy batch from (``--heavy-pool 16``);
``--names`` keeps only the queries named.  ``--pieces`` sets
the slice counts tried (the cluster cuts at most four per worker).  A slice's fixed cost (its restricted core join,
its trailing count's launches) is what a cluster worker pays per slice on top of the whole count's work; each
slice's stage seconds and restricted query vertices are kept.
"""

from __future__ import annotations

import time
from functools import partial

import distsm
from benchmarks import meta
from benchmarks.common import add_rmat_options, parser, rmat_from
from benchmarks.generators import query_set
from distsm.kernels import get_backend
from distsm.kernels.budget import default_budget
from distsm.kernels.counting import Count, Symmetry, Target
from distsm.kernels.explain import Explanation
from distsm.kernels.placement import Placement
from distsm.plan.split import SharedPlan, count_slice, slices
from distsm.semantics import Semantics
from distsm.plan.work import QueryWork


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "slice_overhead")
    add_rmat_options(p, scale=20, edges=6_000_000, labels=32, seed=7)
    p.add_argument("--backend", default="auto")
    p.add_argument("--queries", type=int, default=5)
    p.add_argument("--low", type=float, default=0.3)
    p.add_argument("--high", type=float, default=4.0)
    p.add_argument("--pieces", type=int, nargs="+", default=[8, 32], help="slice counts to try (default 8 32)")
    p.add_argument("--cluster-batch", nargs="?", const="heavy", choices=["heavy", "pool", "small"],
                   help="take the queries from cluster_scaling's heavy batch (16 queries of 8-12 vertices, the "
                        "default), the pool its --heavy-seconds selects from (256 of 8-12 vertices: "
                        "--heavy-pool 16) or its small batch (200 of 4-6 vertices)")
    p.add_argument("--names", nargs="+", default=None, help="only the queries of these names")
    args = p.parse_args(argv)
    data, graph = rmat_from(args)
    be = get_backend(args.backend)
    sem, placement = Semantics(), Placement.of(be, data)

    def synced(f, *args):
        t = time.perf_counter()
        value = f(*args)
        if be.on_device:
            be.xp.cuda.runtime.deviceSynchronize()
        return value, time.perf_counter() - t

    candidates = _candidates(data, args)
    # The first count builds the data graph's indexes (seconds on a 50M-edge graph): not a query's time.
    label = int(data.vertex_labels[0])
    distsm.count(data, distsm.Graph.from_edges([(0, 1)], n=2, vertex_labels=[label, label]), backend=args.backend)
    picked = []
    for name, q in candidates:
        _, seconds = synced(partial(distsm.count, backend=args.backend), data, q)
        if args.low < seconds < args.high:
            picked.append((name, q, seconds))
        if len(picked) >= args.queries:
            break
    rows = []

    def sliced(shared: SharedPlan, ce, q, restrict, budget) -> tuple[int, dict]:
        """:func:`distsm.plan.split.count_slice`'s count and stage seconds."""
        report = Explanation()
        found = count_slice(placement, shared, ce, QueryWork(q, sem, budget), restrict, explain=report)
        return found, dict(report.seconds)

    for name, q, seconds in picked:
        budget = default_budget(be, None)
        stages = Count(placement, Target(q, sem.match_options, Symmetry()), budget)
        planned, plan_s = synced(stages.plan)
        whole, run_s = synced(stages.run, planned)
        shared = SharedPlan.of(planned, placement, None)
        row = {"name": name, "vertices": q.n, "count_s": seconds, "plan_s": plan_s, "run_s": run_s,
               "core": list(planned.plan.core) if planned.plan else None,
               "trailing": [t.vertex for t in planned.plan.trailing] if planned.plan else None,
               "runner": planned.runner.name if planned.runner else None}
        for j, pieces in enumerate(args.pieces):
            ce, index_s = synced(shared.index, shared.runner(placement).backend)
            cut, split_s = synced(slices, shared, get_backend("numpy"), q, sem, pieces)
            times, total, each = [], 0, []
            for restrict, share in cut:
                (found, stage_s), s = synced(sliced, shared, ce, q, restrict, budget)
                total += found
                times.append(s)
                each.append({"seconds": s, "share": share, "restricted": sorted(restrict), "stages": stage_s})
            # A slice count tried again (``--pieces 8 8``) shows what its first run paid once.
            key = f"s{pieces}" if pieces not in args.pieces[:j] else f"s{pieces}_{j}"
            row[key] = {"slices": len(cut), "index_s": index_s, "split_s": split_s, "sum_s": sum(times),
                        "max_s": max(times), "min_s": min(times), "exact": total == whole, "each": each}
        print({k: (round(v, 3) if isinstance(v, float) else
                   {a: b for a, b in v.items() if a != "each"} if isinstance(v, dict) else v)
               for k, v in row.items()}, flush=True)
        rows.append(row)
    meta.write("slice_overhead", {"graph": graph, "backend": args.backend, "queries": rows}, args.out)


def _candidates(data, args) -> list:
    """``(name, query)`` pairs to time: random-walk queries of 8 and 10 vertices, or a batch of ``cluster_scaling``
    (``--cluster-batch``), only those ``--names`` names."""
    if args.cluster_batch:
        from benchmarks.cluster_scaling import scaling_queries
        graphs, names = {
            "heavy": lambda: scaling_queries(data, 16, [8, 12], args.seed, ("core", "dense"), "q"),
            "pool": lambda: scaling_queries(data, 256, [8, 12], args.seed, ("sparse", "core", "dense"), "q"),
            "small": lambda: scaling_queries(data, 200, [4, 6], args.seed + 1000, ("sparse", "dense"), "s"),
        }[args.cluster_batch]()
        candidates = list(zip(names, graphs))
    else:
        candidates = query_set(data, 40, 8, 3) + query_set(data, 20, 10, 4)
    return candidates if args.names is None else [(name, q) for name, q in candidates if name in args.names]


if __name__ == "__main__":
    main()
