"""Where a count's time goes, stage by stage: ``distsm.explain`` repeated on each query, the median of every stage.

    python -m benchmarks run stages --data .peers/gmatch-test/data.graph --backend cupy \
        QUERY.graph ...

For queries whose whole count takes milliseconds (gMatch's Q_19 and Q_8 against gMatch's own 11-24 ms), the fixed
host stages (filter, trial join, refinement, planning) are most of the time; this measures each of them over
``--repeat`` runs after one warm-up, and the count's own median and minimum (``distsm.count``, no explain).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import distsm
from benchmarks import meta
from benchmarks.common import parser


def stages(data: distsm.Graph, query: distsm.Graph, backend: str, repeat: int) -> dict:
    """Median seconds of each explained stage and of the plain count, over ``repeat`` runs."""
    distsm.explain(data, query, backend=backend)
    seen: dict[str, list[float]] = {}
    for _ in range(repeat):
        for name, value in distsm.explain(data, query, backend=backend).seconds.items():
            seen.setdefault(name, []).append(value)
    counts = []
    for _ in range(repeat):
        t = time.perf_counter()
        distsm.count(data, query, backend=backend)
        counts.append(time.perf_counter() - t)
    return {"count_median_s": statistics.median(counts), "count_min_s": min(counts),
            "stages_median_s": {k: statistics.median(v) for k, v in seen.items()}}


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__, "explain_stages")
    p.add_argument("queries", nargs="+", help="query graph files")
    p.add_argument("--data", required=True, help="data graph file")
    p.add_argument("--backend", default="auto")
    p.add_argument("--repeat", type=int, default=25)
    args = p.parse_args(argv)
    data = distsm.read_graph(args.data)
    rows = {}
    for path in args.queries:
        found = rows[Path(path).stem] = stages(data, distsm.read_graph(path), args.backend, args.repeat)
        print(f"{Path(path).stem}: count median {1e3 * found['count_median_s']:.2f} ms, min "
              f"{1e3 * found['count_min_s']:.2f}; " + ", ".join(f"{k} {1e3 * v:.2f}"
                                                                for k, v in found["stages_median_s"].items()))
    meta.write("explain_stages", {"data": args.data, "backend": args.backend, "repeat": args.repeat,
                                  "queries": rows}, args.out)


if __name__ == "__main__":
    main()
