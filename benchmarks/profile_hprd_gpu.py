"""Where the time of the HPRD batch goes on the GPU backend (cProfile over the 200 queries, after a warm-up).

    python -m benchmarks run profile [--backend cupy] [--top 30] [--out FILE]

Prints three unprofiled passes, then the profiled pass's ``--top`` functions by own time; the JSON
(``profile_hprd_gpu``) holds the same numbers.  The profiled pass's counts are checked against the published answers.
"""

from __future__ import annotations

import cProfile
import io
import pstats

import distsm
from benchmarks import common, meta
from distsm.vocabulary import BACKENDS


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__, "profile_hprd_gpu")
    p.add_argument("--backend", default="cupy", choices=BACKENDS)
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args(argv)
    data, queries, expected = common.hprd_suite()
    for q in queries.values():  # warm-up: kernels compiled, index built, plans' automorphism caches filled
        distsm.count(data, q, backend=args.backend)
    passes = []
    for _ in range(3):
        with common.Timer() as t:
            for q in queries.values():
                distsm.count(data, q, backend=args.backend)
        passes.append(t.seconds)
    print(f"{args.backend}: 200 HPRD queries, 3 passes: {[round(x, 3) for x in passes]} s (median "
          f"{sorted(passes)[1]:.3f} s)")
    prof = cProfile.Profile()
    with common.Timer() as t:
        prof.enable()
        counts = {n: distsm.count(data, q, backend=args.backend) for n, q in queries.items()}
        prof.disable()
    assert counts == expected
    print(f"{args.backend}: 200 HPRD queries in {t.seconds:.3f}s (profiled)")
    stats = pstats.Stats(prof, stream=io.StringIO()).sort_stats("tottime")
    top = [{"function": f"{file}:{line}({name})", "calls": calls, "tottime_s": round(tottime, 6),
            "cumtime_s": round(cumtime, 6)}
           for (file, line, name), (_, calls, tottime, cumtime, _) in
           sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:args.top]]
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    path = meta.write("profile_hprd_gpu", {"backend": args.backend, "passes_s": [round(x, 4) for x in passes],
                                           "profiled_s": round(t.seconds, 4), "counts_match_expected": True,
                                           "top_by_own_time": top}, args.out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
