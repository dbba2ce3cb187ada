"""Time per query size on a synthetic power-law graph, GPU and NumPy side by side.

    python -m benchmarks run synthetic [--scale 20 --edges 8000000 --labels 256 --sizes 4 8 12 16 24 32]

R-MAT graph (``--rmat-a`` skew, Zipf vertex labels) and random-walk queries of each size, dense (average degree
>= 3) and sparse (< 3), as GSI/SGSI/EGSM evaluate.  Each query runs under a cap (``--cap`` seconds; a capped
query is reported as not finished, EGSM's "OT") on every backend available (CuPy needs a GPU), and the counts of
queries that finished on several backends must agree.  Speedups are per query, on queries both finished.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import numpy as np

from benchmarks import common, meta
from benchmarks.generators import query_set
from benchmarks.gpu_engine import timed_count
from distsm.kernels import cuda_device_count, get_backend


def summarize(args: argparse.Namespace, backends: dict, rows: list[dict]) -> list[dict]:
    """Per size and kind: queries finished, median and p95 per backend, median GPU/NumPy speedup."""
    summary = []
    for size in args.sizes:
        for kind in ("dense", "sparse"):
            sub = [r for r in rows if r["size"] == size and r["kind"] == kind]
            entry = {"size": size, "kind": kind, "queries": len(sub)}
            for name in backends:
                fin = [r[name]["seconds"] for r in sub if r[name]["finished"]]
                entry[name] = {"finished": len(fin),
                               "median_ms": round(1e3 * statistics.median(fin), 3) if fin else None,
                               "p95_ms": round(1e3 * float(np.percentile(fin, 95)), 3) if fin else None}
            if "cupy" in backends:
                both = [r["numpy"]["seconds"] / r["cupy"]["seconds"] for r in sub
                        if r["numpy"]["finished"] and r["cupy"]["finished"] and r["cupy"]["seconds"] > 0]
                entry["speedup_median"] = round(statistics.median(both), 2) if both else None
            summary.append(entry)
    return summary


def save(args: argparse.Namespace, graph: dict[str, Any], backends: dict, rows: list[dict], complete: bool = True):
    return meta.write("synthetic", {"graph": graph, "cap_s": args.cap, "backends": list(backends),
                                    "complete": complete, "counts_agree": all(r["agree"] for r in rows),
                                    "summary": summarize(args, backends, rows), "queries": rows}, args.out)


def main(argv=None):
    p = common.parser(__doc__, "synthetic")
    common.add_rmat_options(p, scale=16, edges=500_000, labels=256, seed=11)
    p.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 12, 16, 24, 32])
    p.add_argument("--per-kind", type=int, default=6, help="queries per size and kind")
    p.add_argument("--cap", type=float, default=2.0, help="seconds per query and backend")
    args = p.parse_args(argv)

    data, graph = common.rmat_from(args)
    backends = {"numpy": get_backend("numpy")}
    cupy = None
    if cuda_device_count():
        import cupy

        backends["cupy"] = get_backend("cupy")
    for be in backends.values():
        be.index(data)
    rows = []
    for size in args.sizes:
        for kind in ("dense", "sparse"):
            queries = [q for k, q in query_set(data, args.per_kind, size, args.seed + size, kinds=(kind,)) if k == kind]
            for i, q in enumerate(queries):
                rec = {"size": size, "kind": kind, "i": i, "edges": q.m}
                for name, be in backends.items():
                    if not rows and i == 0:  # once: kernels compiled, pools warm
                        timed_count(be, data, q, be.default_budget(), args.cap, cupy if name == "cupy" else None)
                    r = timed_count(be, data, q, be.default_budget(), args.cap, cupy if name == "cupy" else None)
                    rec[name] = {"count": r["count"], "seconds": round(r["wall_s"], 6), "finished": not r["timed_out"]}
                done = [rec[n]["count"] for n in backends if rec[n]["finished"]]
                rec["agree"] = len(set(done)) <= 1
                rows.append(rec)
                save(args, graph, backends, rows, complete=False)  # a timeout keeps what ran
                print(f"size {size:2d} {kind:6s} #{i}: " + "  ".join(
                    f"{n} {rec[n]['seconds'] * 1e3:9.2f} ms{'' if rec[n]['finished'] else ' (cap)'}"
                    for n in backends) + f"  count {done[0] if done else '?'}", file=sys.stderr, flush=True)
    path = save(args, graph, backends, rows)
    head = f"{'size':>4} {'kind':6} {'queries':>7}"
    head += "".join(f" {n + ' fin':>10} {n + ' med ms':>13}" for n in backends)
    print(head + ("   speedup" if "cupy" in backends else ""))
    for e in summarize(args, backends, rows):
        line = f"{e['size']:4d} {e['kind']:6} {e['queries']:7d}" + "".join(
            f" {e[n]['finished']:>10} {e[n]['median_ms'] if e[n]['median_ms'] is not None else '-':>13}"
            for n in backends)
        print(line + (f"   {e.get('speedup_median')}" if "cupy" in backends else ""))
    agree = all(r["agree"] for r in rows)
    print(f"counts agree: {agree}; wrote {path}")
    if not agree:
        raise SystemExit("backends disagree on a count")


if __name__ == "__main__":
    main()
