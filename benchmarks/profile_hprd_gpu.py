"""Where the time of the HPRD batch goes on the GPU backend (cProfile over the 200 queries, after a warm-up).

    python -m benchmarks.profile_hprd_gpu [--backend cupy] [--top 30]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import distsm
from benchmarks.hprd_cpu import load_suite


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", default="cupy")
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args(argv)
    data, queries, expected = load_suite()
    for q in queries.values():  # warm-up: kernels compiled, index built, plans' automorphism caches filled
        distsm.count(data, q, backend=args.backend)
    passes = []
    for _ in range(3):
        t = time.perf_counter()
        for q in queries.values():
            distsm.count(data, q, backend=args.backend)
        passes.append(time.perf_counter() - t)
    print(f"{args.backend}: 200 HPRD queries, 3 passes: {[round(x, 3) for x in passes]} s (median "
          f"{sorted(passes)[1]:.3f} s)")
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    counts = {n: distsm.count(data, q, backend=args.backend) for n, q in queries.items()}
    prof.disable()
    wall = time.perf_counter() - t
    assert counts == expected
    print(f"{args.backend}: 200 HPRD queries in {wall:.3f}s (profiled)")
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
