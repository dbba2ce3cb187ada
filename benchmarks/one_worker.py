"""One Dask worker against in process, side by side: the same batches counted by ``distsm.count`` one query at a
time in this process and by a one-worker :class:`~distsm.Matcher`, in interleaved rounds (in process, then the
worker, ``--rounds`` times), so that both sides see the same machine.

The scaling runs time the in-process baseline minutes before the one-worker run; on the 16-core device host the
same in-process counts took 6.0 s in one round and 8.1 s two minutes later, which is more than the 1.1x the
comparison is about.  Here each round's ratio compares neighbours in time; the batches are the scaling runs'
(R-MAT, ``--heavy`` pool queries by name and ``--small-queries`` of ``--small-size`` vertices), counts must agree.

    python -m benchmarks run one-worker --cpu --rounds 3
"""

from __future__ import annotations

import statistics
import time

from benchmarks import meta
from benchmarks.cluster_scaling import _batch, _cluster, scaling_queries
from benchmarks.common import add_rmat_options, parser, rmat_from

#: Heavy queries of the scaling runs' pool (1-4 s each in process on the 16-core device host's CPU).
HEAVY = ["q4-sparse8", "q19-core8", "q24-core8", "q45-sparse8", "q90-sparse9", "q102-sparse9", "q138-core10",
         "q150-sparse10"]


def main(argv=None):
    import distsm
    from distributed import Client

    p = parser(__doc__, "one_worker")
    add_rmat_options(p, scale=18, edges=4_000_000, labels=64, seed=7)
    p.add_argument("--heavy", nargs="*", default=HEAVY, help="names of the scaling runs' pool queries")
    p.add_argument("--pool", type=int, default=256, help="pool the heavy queries are named from (8-12 vertices)")
    p.add_argument("--small-queries", type=int, default=200)
    p.add_argument("--small-size", type=int, nargs=2, default=[4, 6])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per batch")
    p.add_argument("--cpu", action="store_true", help="a CPU worker and NumPy in process (default: one GPU)")
    p.set_defaults(share_gpu=False)  # one worker on its own GPU (what _cluster reads)
    args = p.parse_args(argv)
    data, described = rmat_from(args)
    graphs, names = scaling_queries(data, args.pool, [8, 12], args.seed, ("sparse", "core", "dense"), "q")
    pool = dict(zip(names, graphs))
    missing = sorted(set(args.heavy) - set(pool))
    if missing:
        raise SystemExit(f"not in the pool of {args.pool}: {', '.join(missing)}")
    small = scaling_queries(data, args.small_queries, args.small_size, args.seed + 1000, ("sparse", "dense"), "s")
    batches = {"heavy": ([pool[n] for n in args.heavy], list(args.heavy)), "small": small}
    cluster, backend = _cluster(1, args)
    rounds: dict[str, list[dict]] = {name: [] for name in batches}
    counts: dict[str, dict[str, int]] = {}
    try:
        with Client(cluster) as client, distsm.Matcher(data, cluster=client, backend=backend,
                                                       partitions=distsm.Partitioning(1, method="metis")) as m:
            first = batches["heavy"][0][0] if args.heavy else small[0][0]
            m.count(first)  # both sides warm: index built, kernels compiled
            distsm.count(data, first, backend=backend)
            for r in range(args.rounds):
                for name, (graphs, names) in batches.items():
                    if not graphs:
                        continue
                    t = time.perf_counter()
                    mine = {q: distsm.count(data, g, backend=backend) for q, g in zip(names, graphs)}
                    local = time.perf_counter() - t
                    worker = _batch(m, graphs, names, args.timeout, "auto")
                    got = {q: v["count"] for q, v in worker["queries"].items()}
                    if got != mine or counts.setdefault(name, mine) != mine:
                        raise SystemExit(f"{name} batch, round {r}: counts differ between the worker and in process")
                    rounds[name].append({"in_process_s": round(local, 4), "worker_s": worker["batch_wall_s"],
                                         "ratio": round(worker["batch_wall_s"] / local, 3),
                                         "worker_cpu_s": worker["worker_cpu_s"]})
                    print(f"round {r} {name}: in process {local:.2f} s, one worker {worker['batch_wall_s']:.2f} s",
                          flush=True)
    finally:
        cluster.close()
    summary = {name: {"median_ratio": round(statistics.median(x["ratio"] for x in rs), 3),
                      "ratios": [x["ratio"] for x in rs], "queries": len(batches[name][1])}
               for name, rs in rounds.items() if rs}
    path = meta.write("one_worker", {"backend": backend, "graph": described,
                                     "heavy": list(args.heavy), "small_queries": args.small_queries,
                                     "small_size": args.small_size, "rounds": rounds, "summary": summary,
                                     "counts_agree": True}, args.out)
    for name, s in summary.items():
        print(f"{name}: one worker / in process, median of {len(s['ratios'])} rounds: {s['median_ratio']} "
              f"({', '.join(map(str, s['ratios']))})")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
