"""Entry-parallel against tiered (warp / block / split-row) GPU join kernels, side by side in one run.

    python -m benchmarks run balance [--scale 20 --edges 8000000 --labels 64 --rmat-a 0.57 --sizes 4 6 8]

A skewed R-MAT graph (hubs make row workloads uneven, the case tiers exist for) and random-walk queries; every
query is counted with both settings of ````distsm.gpu.load-balance```` alternately (each under a cap), counts must
agree, and the tier statistics (rows per tier, split pieces) are recorded.  ``--list`` also lists every match
into device tables in both settings (the tiered kernels compact through a per-group write cache, the
entry-parallel ones through flags, a scan over entries and a scatter) and checks the row counts.  The HPRD
batch (when found) runs in both settings too.  Needs a CUDA device.
"""

from __future__ import annotations

import statistics
import sys

from benchmarks import common, meta
from benchmarks.generators import query_set
from benchmarks.gpu_engine import timed_count
from distsm.config import options
from distsm.kernels import get_backend

MODES = ("entry", "tiered")


def main(argv=None):
    p = common.parser(__doc__, "load_balance")
    common.add_rmat_options(p, scale=20, edges=8_000_000, labels=64, seed=3, rmat_a=0.57)
    p.add_argument("--sizes", type=int, nargs="+", default=[4, 6, 8])
    p.add_argument("--per-size", type=int, default=8)
    p.add_argument("--cap", type=float, default=1.0)
    p.add_argument("--hprd", default=None, help="HPRD folder (default: tests/data/hprd, else a shared copy)")
    p.add_argument("--list", action="store_true",
                   help="also time listing (device tables: the write cache against flags + scan + scatter)")
    args = p.parse_args(argv)
    import cupy

    be = get_backend("cupy")
    data, graph = common.rmat_from(args)
    be.index(data)
    budget = be.default_budget()
    rows = []
    for size in args.sizes:
        for kind, q in query_set(data, args.per_size, size, args.seed + size):
            rec = {"size": size, "kind": kind}
            for mode in MODES:
                be.tier_stats = {}
                with options({"gpu.load-balance": mode}):
                    timed_count(be, data, q, budget, args.cap, cupy)  # warm (compile, pool)
                    r = timed_count(be, data, q, budget, args.cap, cupy)
                    rec[mode] = {"count": r["count"], "seconds": r["wall_s"], "finished": not r["timed_out"],
                                 "gpu_ms": r.get("gpu_ms")}
                    if args.list:
                        r = timed_count(be, data, q, budget, args.cap, cupy, count_only=False)
                        rec[mode].update(list_rows=r["count"], list_seconds=r["wall_s"],
                                         list_finished=not r["timed_out"])
                if mode == "tiered":
                    rec["tiers"] = dict(be.tier_stats)
            both = rec["entry"]["finished"] and rec["tiered"]["finished"]
            rec["agree"] = (not both) or rec["entry"]["count"] == rec["tiered"]["count"]
            if args.list and rec["entry"]["list_finished"] and rec["tiered"]["list_finished"]:
                rec["agree"] &= rec["entry"]["list_rows"] == rec["tiered"]["list_rows"] == rec["entry"]["count"]
            rows.append(rec)
            print(f"size {size} {kind:6s} entry {rec['entry']['seconds'] * 1e3:9.2f} ms tiered "
                  f"{rec['tiered']['seconds'] * 1e3:9.2f} ms count {rec['entry']['count']}", file=sys.stderr,
                  flush=True)
    hprd = None
    folder = common.hprd_dir(args.hprd)
    if folder is not None:
        import distsm

        g, queries, _ = common.hprd_suite(folder)
        qs = [queries[n] for n in sorted(queries)]
        hprd = {}
        for mode in MODES:
            with options({"gpu.load-balance": mode}):
                counts = [distsm.count(g, q, backend="cupy") for q in qs]  # warm
                with common.Timer() as t:
                    counts = [distsm.count(g, q, backend="cupy") for q in qs]
            hprd[mode] = {"seconds": t.seconds, "total_matches": sum(counts)}
        hprd["agree"] = hprd["entry"]["total_matches"] == hprd["tiered"]["total_matches"]
    fin = [r for r in rows if r["entry"]["finished"] and r["tiered"]["finished"]]
    ratios = [r["entry"]["seconds"] / r["tiered"]["seconds"] for r in fin if r["tiered"]["seconds"] > 0]
    heavy = [r["entry"]["seconds"] / r["tiered"]["seconds"] for r in fin if r["entry"]["seconds"] > 0.01]
    listed = [r for r in rows if args.list and r["entry"]["list_finished"] and r["tiered"]["list_finished"]
              and r["entry"]["list_seconds"] > 0.01]
    list_ratios = [r["entry"]["list_seconds"] / r["tiered"]["list_seconds"] for r in listed]
    summary = {"queries": len(rows), "both_finished": len(fin),
               "list_entry_over_tiered_median_over_10ms": round(statistics.median(list_ratios), 3) if list_ratios
               else None, "listed_queries_over_10ms": len(listed),
               "entry_over_tiered_median": round(statistics.median(ratios), 3) if ratios else None,
               "entry_over_tiered_median_over_10ms": round(statistics.median(heavy), 3) if heavy else None,
               "heavy_queries": len(heavy), "counts_agree": all(r["agree"] for r in rows), "hprd": hprd}
    path = meta.write("load_balance", {"graph": graph, "cap_s": args.cap, "summary": summary, "queries": rows},
                      args.out)
    print(f"entry/tiered time ratio: median {summary['entry_over_tiered_median']} over {len(fin)} queries, "
          f"{summary['entry_over_tiered_median_over_10ms']} over {len(heavy)} queries above 10 ms; "
          f"HPRD {hprd}; counts agree {summary['counts_agree']}; wrote {path}")
    if not summary["counts_agree"] or (hprd and not hprd["agree"]):
        raise SystemExit("entry-parallel and tiered kernels disagree")


if __name__ == "__main__":
    main()
