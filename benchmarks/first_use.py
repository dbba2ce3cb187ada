"""What a fresh process's first heavy counts pay that the same counts again do not, with and without
:func:`distsm.warm.warm_process` (what each GPU cluster worker runs when it loads):

    python -m benchmarks run first-use --scale 23 --edges 50000000 --labels 256 --names q2-sparse8 q8-sparse10

Run after ``distsm warmup`` (a warm kernel cache), so what remains is loading modules, running Python code for the
first time and growing the memory pools.  Each variant runs in a process of its own: build the R-MAT graph, warm
the process or not, count the heavy batch's first query of ``cluster_scaling`` (as that benchmark warms a
cluster), then each named query of that batch twice; the first count is profiled (cProfile, top functions by own
time).  Counts are checked equal across the two runs and the two variants.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import subprocess
import sys
import time

from benchmarks import meta
from benchmarks.common import add_rmat_options, parser, rmat_from

VARIANTS = ("plain", "warm_process")


def child(args) -> dict:
    """One variant's seconds and counts, in this (fresh) process."""
    import distsm
    from benchmarks.cluster_scaling import scaling_queries
    from distsm.kernels import get_backend

    data, _ = rmat_from(args)
    graphs, names = scaling_queries(data, 16, [8, 12], args.seed, ("core", "dense"), "q")
    queries = dict(zip(names, graphs))
    unknown = [name for name in args.names if name not in queries]
    if unknown:
        raise SystemExit(f"no query named {unknown} in this graph's heavy batch: {names}")
    be = get_backend(args.backend)

    def timed(query):
        t = time.perf_counter()
        value = distsm.count(data, query, backend=args.backend)
        be.synchronize()
        return value, time.perf_counter() - t

    out: dict = {"warm_process_s": None}
    if args.child == "warm_process":
        from distsm.warm import warm_process

        out["warm_process_s"] = warm_process(args.backend)
    _, out["first_query_s"] = timed(graphs[0])
    for name in args.names:
        prof = cProfile.Profile()
        prof.enable()
        first, first_s = timed(queries[name])
        prof.disable()
        again, again_s = timed(queries[name])
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(20)
        out[name] = {"first_s": first_s, "again_s": again_s, "extra_s": first_s - again_s, "counts": [first, again],
                     "profile": text.getvalue()}
    return out


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "first_use")
    add_rmat_options(p, scale=23, edges=50_000_000, labels=256, seed=7)
    p.add_argument("--backend", default="cupy")
    p.add_argument("--names", nargs="+", default=["q2-sparse8", "q8-sparse10"])
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return
    argv = sys.argv[1:] if argv is None else argv
    runs = {}
    for variant in VARIANTS:
        done = subprocess.run([sys.executable, "-m", "benchmarks.first_use", *argv, "--child", variant],
                              capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the {variant} process failed:\n{done.stderr[-3000:]}")
        runs[variant] = json.loads(done.stdout.strip().splitlines()[-1])
    counts = {name: {c for run in runs.values() for c in run[name]["counts"]} for name in args.names}
    wrong = [name for name, seen in counts.items() if len(seen) != 1]
    if wrong:
        raise SystemExit(f"counts differ between runs or variants: {wrong}")
    for variant, run in runs.items():
        print(variant, f"warm_process {run['warm_process_s'] or 0:.2f}s", "; ".join(
            f"{name} first {run[name]['first_s']:.3f}s again {run[name]['again_s']:.3f}s" for name in args.names))
    meta.write("first_use", {"graph": {"scale": args.scale, "edges": args.edges, "labels": args.labels},
                             "backend": args.backend, "runs": runs}, args.out)


if __name__ == "__main__":
    main()
