"""The host allocator of Dask workers: the same NumPy counts under glibc's default, under the setting Dask's nanny
gives every worker (``MALLOC_TRIM_THRESHOLD_=65536``, which freezes the mmap threshold at 128 KiB), and under the
nanny's setting with the heap thresholds a distsm worker sets (``distsm.cluster.mmap-threshold`` and twice it as the
trim threshold).

Each setting counts the same R-MAT queries in a fresh child process, ``--repeats`` times, interleaved; queries
that did not finish within ``--cap`` seconds in a first child are left out (the others get ten times the cap).
Counts must agree.

    python -m benchmarks run allocator --queries 40 --size 8 --cap 3
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from benchmarks import meta
from benchmarks.common import add_rmat_options, parser, rmat_from

#: Child environments: name -> (extra environment, mmap threshold the child sets through distsm, or None).
SETTINGS = {"glibc default": ({}, None),
            "nanny (MALLOC_TRIM_THRESHOLD_=65536)": ({"MALLOC_TRIM_THRESHOLD_": "65536"}, None),
            "nanny + distsm heap thresholds": ({"MALLOC_TRIM_THRESHOLD_": "65536"}, "config")}


def child(args) -> None:
    """Count the queries (the child side); prints one JSON line of per-query (count, seconds)."""
    import distsm
    from benchmarks.generators import query_set
    from distsm.cluster.allocator import set_mmap_threshold
    from distsm.config import cluster_options

    if args.set_mmap_threshold:
        assert set_mmap_threshold(cluster_options().mmap_threshold or 0), "the allocator refused the threshold"
    data, _ = rmat_from(args)
    queries = [q for _, q in query_set(data, args.queries, args.size, args.seed + 1, ("sparse", "dense", "core"))]
    only = None if args.only is None else set(args.only)
    out = {}
    for i, q in enumerate(queries):
        if only is not None and i not in only:
            continue
        t = time.perf_counter()
        try:
            count = distsm.count(data, q, backend="numpy", timeout=args.cap)
        except TimeoutError:
            count = None
        out[i] = (count, time.perf_counter() - t)
    print(json.dumps(out))


def run_child(argv: list[str], env: dict[str, str], threshold: str | None, only: list[int] | None) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.allocator", "--child", *argv]
    if threshold:
        cmd.append("--set-mmap-threshold")
    if only is not None:
        cmd += ["--only", *map(str, only)]
    done = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def main(argv=None):
    p = parser(__doc__, "allocator")
    add_rmat_options(p, scale=14, edges=200_000, labels=16, seed=1)
    p.add_argument("--queries", type=int, default=40, help="queries generated (sparse, dense and core)")
    p.add_argument("--size", type=int, default=8, help="query vertices")
    p.add_argument("--cap", type=float, default=3.0, help="seconds per query; slower ones are left out")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--child", action="store_true", help=argparse_hidden())
    p.add_argument("--set-mmap-threshold", action="store_true", help=argparse_hidden())
    p.add_argument("--only", type=int, nargs="*", default=None, help=argparse_hidden())
    args = p.parse_args(argv)
    if args.child:
        return child(args)
    shared = ["--scale", str(args.scale), "--edges", str(args.edges), "--labels", str(args.labels), "--seed",
              str(args.seed), "--rmat-a", str(args.rmat_a), "--queries", str(args.queries), "--size",
              str(args.size), "--cap", str(args.cap)]
    first = run_child(shared, {}, None, None)
    kept = sorted(i for i, (count, _) in first.items() if count is not None)
    # The kept queries finished within the cap once; a slower setting gets ten times that, so it finishes them too.
    timed = [*shared[:-1], str(10 * args.cap)]
    runs: dict[str, list[dict]] = {name: [] for name in SETTINGS}
    for _ in range(args.repeats):
        for name, (env, threshold) in SETTINGS.items():
            runs[name].append(run_child(timed, env, threshold, kept))
    counts = {i: first[i][0] for i in kept}
    agree = all(r[i][0] == counts[i] for rs in runs.values() for r in rs for i in kept)
    summary = {name: [round(sum(r[i][1] for i in kept), 3) for r in rs] for name, rs in runs.items()}
    path = meta.write("allocator", {"queries": len(kept), "generated": args.queries, "size": args.size,
                                    "cap_s": args.cap, "counts_agree": agree, "summed_seconds": summary,
                                    "per_query": {name: [{i: r[i][1] for i in kept} for r in rs]
                                                  for name, rs in runs.items()}}, args.out)
    for name, secs in summary.items():
        print(f"{name:>40}: {', '.join(f'{s:.2f}' for s in secs)} s ({len(kept)} queries)")
    print(f"counts agree: {agree}; wrote {path}")
    if not agree:
        raise SystemExit("counts differ between allocator settings")


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
